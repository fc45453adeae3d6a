// Signs in with a local user in headless Chromium and lands on the account page at /; creates a personal access
// token there and prints it (the Java test uses it with curl), then revokes another one it created.
// Usage: node account.test.mjs BASE_URL USERNAME PASSWORD SCREENSHOT_PATH
import { check, launch } from './chromium.mjs';

const [base, username, password, screenshot] = process.argv.slice(2);
const browser = await launch();

try {
  const page = await browser.newPage();
  page.setDefaultTimeout(15000);
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('response', (r) => {
    if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) problems.push(r.status() + ' ' + r.url());
  });

  await page.goto(base + '/');
  check(new URL(page.url()).pathname.startsWith('/auth/login'), 'without a session / asks to sign in: ' + page.url());
  if (await page.locator('#provider-local').count()) await page.click('#provider-local');
  await page.fill('#username', username);
  await page.fill('#password', password);
  await Promise.all([page.waitForURL((u) => u.pathname === '/'), page.click('#submit')]);
  await page.locator('body[data-loaded="true"]').waitFor();
  check((await page.textContent('#username')) === username, 'the page names the signed-in user');
  check(await page.locator('#spaces li').count() >= 1, 'the page lists the workspaces');
  check((await page.textContent('#billing-plan')).includes('not configured'), 'the page says billing is off here');
  check(await page.locator('#usage tbody tr').count() >= 1, 'the page shows the month\'s usage');

  async function create(name, scopes) {
    await page.fill('#token-name', name);
    await page.fill('#token-scopes', scopes);
    await page.click('#create');
    try {
      await page.locator('#tokens tbody tr', { hasText: name }).waitFor();
    } catch (e) {
      throw new Error('the token ' + name + ' was not listed; the page says: ' + (await page.textContent('#message'))
        + '; script errors: ' + problems.join('; '));
    }
    return (await page.textContent('#new-token')).trim();
  }
  const doomed = await create('to revoke', 'threads:read');
  const kept = await create('curl', 'account:read threads:read');
  check(kept.length > 20 && kept !== doomed, 'a new token is shown once: ' + kept);
  await page.locator('#tokens tbody tr', { hasText: 'to revoke' }).locator('button.revoke').click();
  await page.locator('#tokens tbody tr', { hasText: 'to revoke' }).waitFor({ state: 'detached' });
  await page.screenshot({ path: screenshot, fullPage: true });
  check(problems.length === 0, 'no script errors: ' + problems.join('; '));
  console.log('account page test passed');
  console.log('revoked ' + doomed);
  console.log('token ' + kept);
} finally {
  await browser.close();
}
