// Signs in with a local user in headless Chromium, approves an OAuth authorization on the consent page, and
// approves a device on the verification page; prints the URL the browser was sent back to.
// Usage: node oauth.test.mjs BASE_URL USERNAME PASSWORD AUTHORIZE_PATH USER_CODE SCREENSHOT_PATH
import { check, launch } from './chromium.mjs';

const [base, username, password, authorizePath, userCode, screenshot] = process.argv.slice(2);
const browser = await launch();

try {
  const page = await browser.newPage();
  page.setDefaultTimeout(15000);
  await page.goto(base + '/auth/login?provider=local&return_to=' + encodeURIComponent(authorizePath));
  await page.fill('#username', username);
  await page.fill('#password', password);
  await page.click('#submit');
  await page.locator('#approve').waitFor();
  check(new URL(page.url()).pathname === '/oauth/authorize', 'signing in returns to the authorization request: ' + page.url());
  check(await page.locator('#scopes li[data-scope="threads:read"]').count() === 1, 'the consent page lists threads:read');
  await page.screenshot({ path: screenshot, fullPage: true });
  await Promise.all([page.waitForURL((url) => url.searchParams.has('code')), page.click('#approve')]);
  const back = page.url();

  await page.goto(base + '/oauth/device?user_code=' + encodeURIComponent(userCode));
  await page.click('#check');
  await page.locator('#ask').waitFor({ state: 'visible' });
  await page.click('#approve');
  await page.waitForFunction(() => document.getElementById('status').textContent.includes('Approved'));
  console.log('oauth browser test passed');
  console.log(back);
} finally {
  await browser.close();
}
