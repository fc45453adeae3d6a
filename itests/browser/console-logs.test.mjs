// The console's log tail shows a line a request logged: with the logger filter on FeatureSwitch and INFO, disabling
// and enabling a feature (an operator action that logs at INFO) appears in the tail; a WARN filter hides it, and the
// download holds it.
// Usage: node console-logs.test.mjs BASE_URL OPERATOR_TOKEN SCREENSHOT_PATH
import { readFile } from 'node:fs/promises';
import { check, launch } from './chromium.mjs';

const [base, token, screenshot] = process.argv.slice(2);
const browser = await launch();
const FEATURE = 'shortcuts';
const LINE = 'feature ' + FEATURE + ' disabled';

async function post(path) {
  const response = await fetch(base + path, { method: 'POST', headers: { Authorization: 'Bearer ' + token } });
  check(response.ok, path + ' answered ' + response.status);
}

function shown(page) {
  return page.evaluate((text) => [...document.querySelectorAll('#logs-lines div')].some((d) => d.textContent.includes(text)), LINE);
}

try {
  const page = await browser.newPage();
  page.setDefaultTimeout(30000);
  await page.goto(base + '/admin/console#logs');
  await page.fill('#token', token);
  await page.click('#login button[type=submit]');
  await page.locator('#console').waitFor();
  await page.selectOption('#logs-level', 'INFO');
  await page.fill('#logs-logger', 'FeatureSwitch');

  await post('/admin/features/' + FEATURE + '/disable');
  await post('/admin/features/' + FEATURE + '/enable');
  await page.locator('#logs-lines div', { hasText: LINE }).first().waitFor();
  const loggers = await page.evaluate(() => [...document.querySelectorAll('#logs-lines div')].map((d) => d.dataset.logger));
  check(loggers.length > 0 && loggers.every((l) => l.includes('FeatureSwitch')), 'only FeatureSwitch lines: ' + loggers);
  await page.locator('#logs').screenshot({ path: screenshot });

  await page.selectOption('#logs-level', 'WARN');
  await page.waitForTimeout(2500);
  check(!(await shown(page)), 'a WARN filter hides the INFO line');

  await page.selectOption('#logs-level', 'INFO');
  await page.locator('#logs-lines div', { hasText: LINE }).first().waitFor();
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#logs-download')]);
  const text = await readFile(await download.path(), 'utf8');
  check(text.includes(LINE), 'the download holds the line');
  check(download.suggestedFilename() === 'atrium.log', 'the download is atrium.log: ' + download.suggestedFilename());
  console.log('logs test passed');
} finally {
  await browser.close();
}
