// The console's Users and Audit views in headless Chromium: signs in with the operator token, finds a user by search,
// suspends them by clicking (their token is refused on the very next request), reactivates them (accepted again),
// revokes their tokens (their token is then unknown: 401), adds a local user, and reads the audit log.
// Usage: node users.test.mjs BASE_URL OPERATOR_TOKEN USERNAME USER_TOKEN NEW_USERNAME SCREENSHOT_PATH
import { check, launch } from './chromium.mjs';

const [base, token, username, userToken, newUsername, screenshot] = process.argv.slice(2);
const browser = await launch();

async function userStatus() {
  const response = await fetch(base + '/api/spaces/me', { headers: { Authorization: 'Bearer ' + userToken } });
  return response.status;
}

try {
  const page = await browser.newPage();
  page.setDefaultTimeout(15000);
  page.on('dialog', (dialog) => dialog.accept());
  await page.goto(base + '/admin/console');
  await page.fill('#token', token);
  await page.click('#login button[type=submit]');
  await page.locator('#users tbody tr').first().waitFor();
  check(await userStatus() === 200, 'the user starts active');

  await page.fill('#user-q', username);
  await page.click('#user-search button[type=submit]');
  const row = () => page.locator(`#users tr[data-username="${username}"]`);
  await row().waitFor();
  // a new user is on the unfiltered first page too: wait for the search's answer to replace that page
  await page.waitForFunction(() => document.querySelectorAll('#users tbody tr').length <= 1).catch(() => {});
  check(await page.locator('#users tbody tr').count() === 1, 'the search finds only that user');

  await row().getByRole('button', { name: 'Suspend' }).click();
  await row().locator('td.disabled', { hasText: 'suspended' }).waitFor();
  const suspended = await userStatus();
  check(suspended === 401, 'a suspended user\'s token is refused at once, got ' + suspended);
  check((await page.textContent('#message')).includes(username + ' suspended'), 'the console confirms the suspension');

  await row().getByRole('button', { name: 'Reactivate' }).click();
  await row().locator('td.enabled', { hasText: 'active' }).waitFor();
  check(await userStatus() === 200, 'a reactivated user\'s token works again');

  await row().getByRole('button', { name: 'Revoke tokens' }).click();
  await page.locator('#message', { hasText: 'Revoked for ' + username }).waitFor();
  check(await userStatus() === 401, 'a revoked token is unknown');
  await row().locator('td:nth-child(6)', { hasText: /^0$/ }).waitFor();

  await page.fill('#new-username', newUsername);
  await page.click('#user-add button[type=submit]');
  await page.locator('#message', { hasText: 'User ' + newUsername + ' added.' }).waitFor();
  check((await page.textContent('#message')).includes('password (shown once)'), 'a generated password is shown once');

  // answers out of order (two users now): an unfiltered list asked first but answered after the search must not replace the search's
  const unfiltered = (url) => url.pathname === '/admin/users' && !url.searchParams.has('q');
  await page.route(unfiltered, async (route) => {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await route.continue();
  });
  const lateAnswer = page.waitForResponse((response) => unfiltered(new URL(response.url())));
  await page.fill('#user-q', '');
  await page.click('#user-search button[type=submit]');
  await page.fill('#user-q', username);
  await page.click('#user-search button[type=submit]');
  await lateAnswer;
  await page.waitForTimeout(300);
  await page.unroute(unfiltered);
  const shown = await page.locator('#users tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.username));
  check(shown.length === 1 && shown[0] === username,
    'a list asked before the search but answered after it is dropped; shown: ' + shown.join(', '));

  const audit = page.locator('#audit tbody');
  for (const action of ['user_suspended', 'user_reactivated', 'tokens_revoked']) {
    await audit.locator(`tr[data-action="${action}"]`, { hasText: username }).first().waitFor();
  }
  await audit.locator('tr[data-action="user_created"]', { hasText: newUsername }).first().waitFor();
  await page.fill('#audit-action', 'user_suspended');
  await page.click('#audit-filter button[type=submit]');
  await page.waitForFunction(() => [...document.querySelectorAll('#audit tbody tr')]
    .every((tr) => tr.dataset.action === 'user_suspended'));
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log('users console test passed');
} finally {
  await browser.close();
}
