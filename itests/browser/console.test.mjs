// Opens the operator console in headless Chromium (its CSP strict, refusing nothing the page uses), is told a wrong token was refused, signs in with the operator token, disables and enables the
// memories feature by clicking, and checks after each click that the admin API agrees.
// Usage: node console.test.mjs BASE_URL OPERATOR_TOKEN SCREENSHOT_PATH
import { check, launch } from './chromium.mjs';

const [base, token, screenshot] = process.argv.slice(2);
const browser = await launch();

async function memoriesEnabled() {
  const response = await fetch(base + '/admin/features', { headers: { Authorization: 'Bearer ' + token } });
  const body = await response.json();
  return body.features.find((f) => f.name === 'memories').enabled;
}

try {
  const page = await browser.newPage();
  page.setDefaultTimeout(15000);
  // the console's CSP allows nothing inline: anything the page needs that it would refuse shows as a console error
  const refusals = [];
  page.on('console', (m) => { if (m.text().includes('Content Security Policy')) refusals.push(m.text()); });
  const opened = await page.goto(base + '/admin/console');
  const csp = opened.headers()['content-security-policy'] || '';
  check(csp.includes("default-src 'self'") && !csp.includes('unsafe-inline'), 'a strict CSP on the console: ' + csp);
  check(await page.evaluate(() => getComputedStyle(document.querySelector('table')).borderCollapse === 'collapse'),
    "the console's stylesheet applies");
  // a wrong token is told, not silently asked for again
  await page.fill('#token', 'not-the-operator-token');
  await page.click('#login button[type=submit]');
  await page.locator('#message.error', { hasText: 'The operator token was refused.' }).waitFor();
  check(await page.locator('#login').isVisible(), 'the token form is shown again after a refusal');
  await page.fill('#token', token);
  await page.click('#login button[type=submit]');
  const row = () => page.locator('#features tr[data-feature="memories"]');
  await row().locator('td.enabled').waitFor();
  check(await memoriesEnabled(), 'memories should start enabled');

  await row().getByRole('button', { name: 'Disable' }).click();
  await row().locator('td.disabled').waitFor();
  check(!(await memoriesEnabled()), 'the API should report memories disabled after clicking Disable');
  check((await page.textContent('#message')).includes('memories disabled'), 'the console should confirm the change');

  await row().getByRole('button', { name: 'Enable' }).click();
  await row().locator('td.enabled').waitFor();
  check(await memoriesEnabled(), 'the API should report memories enabled after clicking Enable');

  await page.reload();
  await row().waitFor();
  check(await page.isHidden('#login'), 'the token is kept for the browser session');
  check((await page.textContent('#bundles')).includes('dev.atrium.kernel'), 'the bundle list is shown');
  await page.screenshot({ path: screenshot, fullPage: true });
  check(refusals.length === 0, 'the CSP refused nothing: ' + refusals.join(' | '));
  console.log('console test passed');
} finally {
  await browser.close();
}
