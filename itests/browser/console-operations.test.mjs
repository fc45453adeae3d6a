// The console's Operations view in headless Chromium: sees a custom domain's certificate highlighted as near its
// expiry, a configuration file of the deploy directory by its PID, the secret keys and identity providers tables,
// rotates the OAuth signing key (after a confirm; the keys table then shows the new current kid), and sends a dead
// federation delivery again with its Retry button.
// Usage: node console-operations.test.mjs BASE_URL OPERATOR_TOKEN HOST CONFIG_FILE DELIVERY_ID SCREENSHOT_PATH
import { check, launch } from './chromium.mjs';

const [base, token, host, configFile, deliveryId, screenshot] = process.argv.slice(2);
const browser = await launch();

try {
  const page = await browser.newPage();
  page.setDefaultTimeout(15000);
  const dialogs = [];
  page.on('dialog', (dialog) => { dialogs.push(dialog.message()); dialog.accept(); });
  await page.goto(base + '/admin/console');
  await page.fill('#token', token);
  await page.click('#login button[type=submit]');
  await page.click('#views a[href="#operations-view"]');

  // the certificate: within the warning window, so the row is highlighted
  const cert = page.locator(`#certificates tr[data-host="${host}"]`);
  await cert.waitFor();
  check(await cert.getAttribute('class') === 'near-expiry', 'a certificate near its expiry is highlighted');
  check((await cert.innerText()).includes('(self-signed)'), 'the certificate says it signed itself');

  // the deploy directory: the configuration file with its PID, and no contents
  const file = page.locator(`#deploy tr[data-file="${configFile}"]`);
  await file.waitFor();
  check(await file.getAttribute('data-kind') === 'configuration', 'the file is a configuration');
  check((await file.innerText()).includes(configFile.replace(/\.config$/, '')), 'the PID is shown');
  check(!(await page.content()).includes('deploy-view-secret'), 'no file contents are in the page');

  // the tables of the existing admin routes load too
  await page.locator('#secret-keys thead').waitFor();
  await page.locator('#identity-providers thead').waitFor();

  // OAuth: Rotate, confirmed, makes a new current key
  const current = page.locator('#oauth-keys tr[data-state="current"]');
  await current.waitFor();
  const before = await current.getAttribute('data-kid');
  await page.locator('#oauth-rotate button[type=submit]').click();
  const said = page.locator('#message', { hasText: 'New OAuth signing key' });
  await said.waitFor();
  check(dialogs.some((d) => d.includes('new OAuth signing key')), 'the rotation was confirmed first');
  const kid = (await said.innerText()).match(/New OAuth signing key (\S+),/)[1];
  check(kid !== before, 'a new kid');
  await page.locator(`#oauth-keys tr[data-state="current"][data-kid="${kid}"]`).waitFor();
  await page.locator(`#oauth-keys tr[data-state="retired"][data-kid="${before}"]`).waitFor();

  // a dead delivery sent again
  const dead = page.locator(`#deliveries tr[data-delivery="${deliveryId}"][data-state="dead"]`);
  await page.selectOption('#deliveries-state', 'dead');
  await page.click('#deliveries-filter button[type=submit]');
  await dead.waitFor();
  await dead.getByRole('button', { name: 'Retry' }).click();
  await page.locator('#message', { hasText: 'Delivery ' + deliveryId + ' is queued again.' }).waitFor();

  await page.locator('#operations-view').screenshot({ path: screenshot });
  console.log('KID ' + kid);
  console.log('operations console test passed');
} finally {
  await browser.close();
}
