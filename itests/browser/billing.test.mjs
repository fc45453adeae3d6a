// Signs in on a server whose payment provider is the test's fake Stripe: the account page shows the plan on offer and
// the month's usage, and its Subscribe button sends the browser to the provider's checkout page.
// Usage: node billing.test.mjs BASE_URL USERNAME PASSWORD CHECKOUT_URL_PREFIX
import { check, launch } from './chromium.mjs';

const [base, username, password, checkoutPrefix] = process.argv.slice(2);
const browser = await launch();

try {
  const page = await browser.newPage();
  page.setDefaultTimeout(15000);
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));

  await page.goto(base + '/');
  if (await page.locator('#provider-local').count()) await page.click('#provider-local');
  await page.fill('#username', username);
  await page.fill('#password', password);
  await Promise.all([page.waitForURL((u) => u.pathname === '/'), page.click('#submit')]);
  await page.locator('body[data-loaded="true"]').waitFor();
  check((await page.textContent('#billing-plan')).includes('No subscription'), 'the page says there is no plan yet');
  check(await page.locator('#plan option').count() === 1, 'the page offers the operator\'s plan');
  check(!(await page.locator('#billing-actions').isHidden()), 'the page shows checkout and the portal');
  await Promise.all([
    page.waitForURL((u) => u.href.startsWith(checkoutPrefix)),
    page.click('#subscribe button'),
  ]);
  check(problems.length === 0, 'no script errors: ' + problems.join('; '));
  console.log('billing page test passed');
} finally {
  await browser.close();
}
