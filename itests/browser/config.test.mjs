// The console's Configuration view in headless Chromium: finds the Git endpoint's body limit by filtering, sees it comes
// from the environment, edits it inline and saves (the endpoint then refuses a body over the new limit, and the view
// says the value is the operator's, from the file in deploy/), then resets it (back to the environment's value), and
// sees a secret only masked.
// Usage: node config.test.mjs BASE_URL OPERATOR_TOKEN SECRET SCREENSHOT_PATH
import { check, launch } from './chromium.mjs';

const [base, token, secret, screenshot] = process.argv.slice(2);
const PID = 'dev.atrium.git.http';
const browser = await launch();

// the limit the Git endpoint names when it refuses a 5000-byte body, waiting up to 20 s for it to be `limit`
async function awaitLimit(limit) {
  const deadline = Date.now() + 20000;
  let last = '';
  while (Date.now() < deadline) {
    const response = await fetch(base + '/git/nobody/nothing.git/git-upload-pack', {
      method: 'POST', headers: { 'Content-Type': 'application/x-git-upload-pack-request' }, body: new Uint8Array(5000),
    });
    last = response.status + ' ' + await response.text();
    if (response.status === 413 && last.includes('the limit is ' + limit)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('the Git body limit did not become ' + limit + ': ' + last);
}

try {
  const page = await browser.newPage();
  page.setDefaultTimeout(15000);
  await page.goto(base + '/admin/console');
  await page.fill('#token', token);
  await page.click('#login button[type=submit]');
  const section = page.locator(`#config-list section[data-pid="${PID}"]`);
  await section.waitFor();
  await page.fill('#config-q', 'git.http');
  check(await page.locator('#config-list section').count() === 1, 'the filter leaves the one PID');

  const row = section.locator('tr[data-property="maxBodyBytes"]');
  await row.locator('td.source-environment', { hasText: 'ATRIUM_GIT_MAX_BODY_BYTES' }).waitFor();
  check(await row.locator('input').inputValue() === '4096', 'the value is the environment\'s');

  await row.locator('input').fill('4600');
  await row.getByRole('button', { name: 'Save' }).click();
  await page.locator('#message', { hasText: 'Saved ' + PID + ' maxBodyBytes.' }).waitFor();
  await section.locator('tr[data-property="maxBodyBytes"] td.source-operator', { hasText: 'deploy/' + PID + '.config' }).waitFor();
  await awaitLimit(4600);
  await page.screenshot({ path: screenshot, fullPage: true });

  await row.locator('input').fill('many');
  await row.getByRole('button', { name: 'Save' }).click();
  await page.locator('#message.error', { hasText: 'maxBodyBytes' }).waitFor();

  await section.locator('tr[data-property="maxBodyBytes"]').getByRole('button', { name: 'Reset' }).click();
  await page.locator('#message', { hasText: 'Reset ' + PID + ' maxBodyBytes.' }).waitFor();
  await section.locator('tr[data-property="maxBodyBytes"] td.source-environment').waitFor();
  await awaitLimit(4096);

  await page.fill('#config-q', 'dev.atrium.mcp');
  const key = page.locator('#config-list section[data-pid="dev.atrium.mcp"] tr[data-property="tokenKey"]');
  await key.waitFor();
  check(await key.locator('input').getAttribute('type') === 'password', 'a secret is typed into a password field');
  check(await key.locator('input').inputValue() === '', 'a secret is not in the page');
  check(!(await page.content()).includes(secret), 'the secret is nowhere in the page');
  console.log('config console test passed');
} finally {
  await browser.close();
}
