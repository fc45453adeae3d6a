// The console's Users and Audit views: search users, suspend, reactivate, end every token and session, add a local
// user; read the audit log. Loaded after console.js, whose API helper (operator token, 401 handling) it uses.
(function () {
  const { api, say, cell, when, button } = window.atriumConsole;
  const $ = (id) => document.getElementById(id);
  let usersCursor = null;
  let auditCursor = null;
  // each list's last load: an answer to an earlier one (a search typed over, a reload) arriving later is dropped
  let usersLoad = 0;
  let auditLoad = 0;

  async function loadUsers(more) {
    const params = new URLSearchParams({ limit: '20' });
    const q = $('user-q').value.trim();
    const status = $('user-status').value;
    if (q) params.set('q', q);
    if (status) params.set('status', status);
    if (more && usersCursor) params.set('cursor', usersCursor);
    const load = ++usersLoad;
    const page = await api('GET', '/admin/users?' + params);
    if (load !== usersLoad) return;
    const body = $('users').tBodies[0];
    if (!more) body.replaceChildren();
    for (const u of page.users) {
      const row = body.insertRow();
      row.dataset.username = u.username || '';
      cell(row, u.username || '(no username yet)');
      cell(row, u.provider);
      cell(row, u.status, u.status === 'active' ? 'enabled' : 'disabled');
      cell(row, when(u.created_at));
      cell(row, when(u.last_sign_in_at));
      cell(row, String(u.token_count));
      const actions = cell(row, '');
      if (u.username) {
        actions.appendChild(u.status === 'active'
          ? button('Suspend', () => act(u.username, 'suspend', 'suspended'))
          : button('Reactivate', () => act(u.username, 'reactivate', 'reactivated')));
        actions.appendChild(button('Revoke tokens', () => revoke(u.username)));
      }
    }
    usersCursor = page.next_cursor;
    $('users-more').hidden = !usersCursor;
  }

  async function act(username, action, done) {
    try {
      await api('POST', '/admin/users/' + encodeURIComponent(username) + '/' + action);
      say('User ' + username + ' ' + done + '.');
    } catch (e) {
      say(e.message, true);
    }
    await reload();
  }

  async function revoke(username) {
    if (!window.confirm('End every token and session of ' + username + '?')) return;
    try {
      const result = await api('POST', '/admin/users/' + encodeURIComponent(username) + '/revoke-tokens');
      const counts = Object.entries(result.revoked).map(([kind, n]) => n + ' ' + kind.replace(/_/g, ' ')).join(', ');
      say('Revoked for ' + username + ': ' + counts + '.');
    } catch (e) {
      say(e.message, true);
    }
    await reload();
  }

  async function addUser(event) {
    event.preventDefault();
    const username = $('new-username').value.trim();
    const password = $('new-password').value;
    const body = JSON.stringify(password ? { username, password } : { username });
    try {
      let created;
      try {
        created = await api('POST', '/admin/identity/local-users', body);
      } catch (e) {
        // sign-in (identity) switched off: the user is made for tokens only
        if (e.status !== 404 && e.status !== 503) throw e;
        created = await api('POST', '/admin/users', JSON.stringify({ username }));
      }
      say('User ' + created.user.username + ' added.'
        + (created.password ? ' Their password (shown once): ' + created.password : ''));
      $('new-username').value = '';
      $('new-password').value = '';
    } catch (e) {
      say(e.message, true);
    }
    await reload();
  }

  async function loadAudit(more) {
    const params = new URLSearchParams({ limit: '50' });
    const actor = $('audit-actor').value.trim();
    const action = $('audit-action').value.trim();
    if (actor) params.set('actor', actor);
    if (action) params.set('action', action);
    if (more && auditCursor) params.set('cursor', auditCursor);
    const load = ++auditLoad;
    const page = await api('GET', '/admin/audit?' + params);
    if (load !== auditLoad) return;
    const body = $('audit').tBodies[0];
    if (!more) body.replaceChildren();
    for (const e of page.entries) {
      const row = body.insertRow();
      row.dataset.action = e.action;
      [when(e.at), e.actor, e.action, e.target || '-', e.detail || ''].forEach((t) => cell(row, t));
    }
    auditCursor = page.next_cursor;
    $('audit-more').hidden = !auditCursor;
  }

  async function reload() {
    await Promise.all([loadUsers(false), loadAudit(false)]).catch((e) => say(e.message, true));
  }

  function guarded(load) {
    return (event) => {
      if (event) event.preventDefault();
      load().catch((e) => say(e.message, true));
    };
  }

  $('user-search').addEventListener('submit', guarded(() => loadUsers(false)));
  $('users-more').addEventListener('click', guarded(() => loadUsers(true)));
  $('user-add').addEventListener('submit', addUser);
  $('audit-filter').addEventListener('submit', guarded(() => loadAudit(false)));
  $('audit-more').addEventListener('click', guarded(() => loadAudit(true)));
  document.addEventListener('atrium:signed-in', reload);
})();
