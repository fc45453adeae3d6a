// The console's health view while the server's PostgreSQL stops and starts again: it shows the database up (green),
// then down (red) and the whole server down, then up again, without a reload. The Java side
// (ConsoleHealthBrowserTest) stops and starts the database when this script prints "green" and "red".
// Usage: node console-health.test.mjs BASE_URL OPERATOR_TOKEN SCREENSHOT_PREFIX
import { check, launch } from './chromium.mjs';

const [base, token, screenshot] = process.argv.slice(2);
const browser = await launch();

try {
  const page = await browser.newPage();
  page.setDefaultTimeout(60000);
  await page.goto(base + '/admin/console#health');
  await page.fill('#token', token);
  await page.click('#login button[type=submit]');
  const database = page.locator('#health-database');
  const overall = page.locator('#health-overall');

  await page.locator('#health-database.state-up').waitFor();
  check((await database.textContent()).includes('Database: up'), 'the database is shown up');
  check(await overall.getAttribute('data-state') !== 'down', 'the server is not shown down');
  check(await page.locator('#health-features tr[data-name="memories"] td.state-ready').count() === 1,
    'memories is shown ready');
  check((await page.textContent('#health-processes')).includes('workerd'), 'the processes are listed');
  check(await page.locator('#health-disks tr[data-name="data"]').count() === 1, 'the data directory\'s disk is listed');
  await page.locator('#health-checks li[data-name="certificates"] .state-ok').waitFor();
  await page.locator('#health').screenshot({ path: screenshot + '-green.png' });
  console.log('green');

  // the test stops the database now
  await page.locator('#health-database.state-down').waitFor();
  await page.locator('#health-overall.state-down').waitFor();
  const why = await database.textContent();
  check(/^Database: down \(.+\)$/.test(why), 'the health says why the database is down: ' + why);
  console.log(why);
  const red = await page.evaluate(() => getComputedStyle(document.getElementById('health-database')).color);
  check(red === 'rgb(138, 28, 28)', 'the database line is red: ' + red);
  await page.locator('#health').screenshot({ path: screenshot + '-red.png' });
  console.log('red');

  // the test starts it again
  await page.locator('#health-database.state-up').waitFor();
  await page.waitForFunction(() => document.getElementById('health-overall').dataset.state !== 'down');
  const green = await page.evaluate(() => getComputedStyle(document.getElementById('health-database')).color);
  check(green === 'rgb(23, 97, 23)', 'the database line is green again: ' + green);
  console.log('green again');
} finally {
  await browser.close();
}
