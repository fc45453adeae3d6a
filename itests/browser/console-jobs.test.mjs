// The console's Jobs view: "Run repository maintenance now" starts maintenance of every repository, and the view,
// polling on its own, shows its progress bar filled and the state "succeeded" without a reload.
// Usage: node console-jobs.test.mjs BASE_URL OPERATOR_TOKEN SCREENSHOT
import { check, launch } from './chromium.mjs';

const [base, token, screenshot] = process.argv.slice(2);
const browser = await launch();

try {
  const page = await browser.newPage();
  page.setDefaultTimeout(180000);
  await page.goto(base + '/admin/console#jobs-view');
  await page.fill('#token', token);
  await page.click('#login button[type=submit]');
  await page.locator('#jobs-run-maintenance').waitFor();

  const [started] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/admin/repos/maintenance') && r.request().method() === 'POST'),
    page.click('#jobs-run-maintenance'),
  ]);
  check(started.status() === 202, 'the maintenance was accepted: ' + started.status());
  const job = (await started.json()).job;
  console.log('started ' + job.id + ' ' + job.state);
  const row = page.locator(`#jobs tr[data-id="${job.id}"]`);
  await row.waitFor();
  check((await row.locator('td').first().textContent()) === 'Maintenance of every repository', 'the row names the job');

  await row.locator('td.job-state[data-state="succeeded"]').waitFor();
  const bar = await row.locator('progress').evaluate((p) => ({ value: p.value, max: p.max, position: p.position }));
  check(bar.max >= 1 && bar.value === bar.max, 'the progress bar is full: ' + JSON.stringify(bar));
  const result = await row.locator('td.job-result').textContent();
  // another test on the shared server may delete a repository while it runs
  check(/^\d+ of \d+ repositories collected, 0 failed(, \d+ deleted meanwhile)?$/.test(result),
    'the result counts the repositories: ' + result);
  const colour = await row.locator('td.job-state').evaluate((td) => getComputedStyle(td).color);
  check(colour === 'rgb(23, 97, 23)', 'succeeded is green: ' + colour);
  await page.locator('#jobs-view').screenshot({ path: screenshot });
  console.log('succeeded: ' + result);
} finally {
  await browser.close();
}
