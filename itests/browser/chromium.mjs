// What the browser tests share: Debian's Chromium (or $CHROMIUM) launched headless for playwright-core, and the check
// that stops a script with a message.
import { chromium } from 'playwright-core';

export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

export function check(condition, message) {
  if (!condition) throw new Error(message);
}
