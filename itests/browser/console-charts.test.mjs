// The console's requests/s chart moves under load: it reads the sampled series, this script sends requests for a
// while, and the chart's newest value rises and its canvas is drawn anew.
// Usage: node console-charts.test.mjs BASE_URL OPERATOR_TOKEN SCREENSHOT_PATH
import { check, launch } from './chromium.mjs';

const [base, token, screenshot] = process.argv.slice(2);
const browser = await launch();
let loading = true;

/** Sends requests back to back on a few connections until told to stop or for 60 s at most. */
async function load(clients) {
  const until = Date.now() + 60000;
  let sent = 0;
  await Promise.all(Array.from({ length: clients }, async () => {
    while (loading && Date.now() < until) {
      const response = await fetch(base + '/admin/features', { headers: { Authorization: 'Bearer ' + token } });
      await response.arrayBuffer();
      sent++;
    }
  }));
  return sent;
}

try {
  const page = await browser.newPage();
  page.setDefaultTimeout(30000);
  await page.goto(base + '/admin/console#charts');
  await page.fill('#token', token);
  await page.click('#login button[type=submit]');
  const chart = page.locator('#chart-requests');
  await chart.locator('canvas').first().waitFor();
  for (const id of ['p99', 'errors', 'gate', 'pool', 'memory']) {
    await page.locator('#chart-' + id + ' canvas').first().waitFor();
  }
  const before = Number((await chart.getAttribute('data-last')) || 0);
  const drawnBefore = await page.evaluate(() => document.querySelector('#chart-requests canvas').toDataURL());

  const sending = load(4);
  const target = Math.max(5, before * 3);
  await page.waitForFunction(
    (t) => Number(document.getElementById('chart-requests').dataset.last || 0) > t, target, { timeout: 45000, polling: 500 });
  loading = false;
  const sent = await sending;
  const after = Number(await chart.getAttribute('data-last'));
  const drawnAfter = await page.evaluate(() => document.querySelector('#chart-requests canvas').toDataURL());
  check(drawnAfter !== drawnBefore, 'the requests/s chart was drawn anew');
  check(Number(await chart.getAttribute('data-points')) >= 2, 'the chart has samples');
  const legend = await page.textContent('#chart-requests');
  check(legend.includes('all') && legend.includes('operations'), 'the legend names all and the capability: ' + legend);
  await page.locator('#charts').screenshot({ path: screenshot });
  console.log(`charts test passed: requests/s ${before.toFixed(2)} before, ${after.toFixed(2)} under load (${sent} sent)`);
} finally {
  loading = false;
  await browser.close();
}
