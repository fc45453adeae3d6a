// The operator console: everything goes through the admin API with the operator token, which is kept in
// sessionStorage (entered once per browser session, gone when the tab closes).
(function () {
  const KEY = 'atrium.operatorToken';
  const $ = (id) => document.getElementById(id);

  function token() { return sessionStorage.getItem(KEY); }

  // the answer's status and body; throws the spec error's message for anything but 2xx
  async function send(method, path, body, contentType) {
    const headers = { Authorization: 'Bearer ' + token() };
    if (body !== undefined) headers['Content-Type'] = contentType || 'application/json';
    const response = await fetch(path, { method, headers, body });
    const data = await response.json().catch(() => ({}));
    if (response.status === 401) { signOut('The operator token was refused.'); throw new Error('unauthorized'); }
    if (!response.ok) {
      const failure = new Error((data.error && data.error.message) || ('HTTP ' + response.status));
      failure.status = response.status;
      throw failure;
    }
    return { status: response.status, data };
  }

  async function api(method, path, body, contentType) {
    return (await send(method, path, body, contentType)).data;
  }

  function say(text, isError) {
    const m = $('message');
    m.textContent = text;
    m.className = isError ? 'error' : '';
  }

  function cell(row, text, className) {
    const td = row.insertCell();
    td.textContent = text;
    if (className) td.className = className;
    return td;
  }

  async function refresh() {
    const [features, bundles] = await Promise.all([api('GET', '/admin/features'), api('GET', '/admin/bundles')]);
    const fbody = $('features').tBodies[0];
    fbody.replaceChildren();
    for (const f of features.features) {
      const row = fbody.insertRow();
      row.dataset.feature = f.name;
      cell(row, f.name);
      cell(row, f.status || (f.enabled ? 'enabled' : 'disabled'), f.enabled ? 'enabled' : 'disabled');
      cell(row, f.bundles.map((b) => (b.symbolic_name || b.id) + ' (' + b.state + ')').join(', ')
        + ((f.conflicts || []).length ? '; only one of it and ' + f.conflicts.join(', ') + ' is enabled' : ''));
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = f.enabled ? 'Disable' : 'Enable';
      button.addEventListener('click', () => toggle(f.name, f.enabled ? 'disable' : 'enable'));
      cell(row, '').appendChild(button);
    }
    const bbody = $('bundles').tBodies[0];
    bbody.replaceChildren();
    const select = $('upgrade-bundle');
    const chosen = select.value;
    select.replaceChildren();
    for (const b of bundles.bundles) {
      const row = bbody.insertRow();
      [String(b.id), b.symbolic_name, b.version, b.state, b.feature || '-'].forEach((t) => cell(row, t));
      if (b.symbolic_name && b.symbolic_name.startsWith('dev.atrium.')) {
        select.add(new Option(b.symbolic_name + ' ' + b.version, b.symbolic_name));
      }
    }
    if (chosen) select.value = chosen;
  }

  async function toggle(name, action) {
    try {
      await api('POST', '/admin/features/' + encodeURIComponent(name) + '/' + action);
      say('Feature ' + name + ' ' + action + 'd.');
    } catch (e) {
      say(e.message, true);
    }
    await refresh().catch((e) => say(e.message, true));
  }

  async function upgrade(event) {
    event.preventDefault();
    const file = $('upgrade-jar').files[0];
    const bsn = $('upgrade-bundle').value;
    say('Upgrading ' + bsn + ' …');
    try {
      const result = await api('POST', '/admin/bundles/' + encodeURIComponent(bsn) + '/update', file, 'application/java-archive');
      say('Upgraded ' + bsn + ' from ' + result.bundle.previous_version + ' to ' + result.bundle.version + '.');
    } catch (e) {
      say(e.message, true);
    }
    await refresh().catch((e) => say(e.message, true));
  }

  function signOut(text) {
    sessionStorage.removeItem(KEY);
    $('console').hidden = true;
    $('login').hidden = false;
    if (text) say(text, true);
  }

  async function signIn() {
    say('');
    $('login').hidden = true;
    $('console').hidden = false;
    try {
      await refresh();
      // the other views (users.js) load their data now that the token is known
      document.dispatchEvent(new CustomEvent('atrium:signed-in'));
    } catch (e) {
      if (e.message !== 'unauthorized') say(e.message, true);
    }
  }

  // an instant as the views show it: UTC to the second
  function when(instant) { return instant ? new Date(instant).toISOString().replace('T', ' ').slice(0, 19) : '-'; }

  function button(text, onClick) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = text;
    b.addEventListener('click', onClick);
    return b;
  }

  // what the other views' scripts share: the token-carrying API call, the message line and the table helpers
  window.atriumConsole = { api, send, say, cell, when, button };

  $('login').addEventListener('submit', (event) => {
    event.preventDefault();
    sessionStorage.setItem(KEY, $('token').value.trim());
    $('token').value = '';
    signIn();
  });
  $('logout').addEventListener('click', () => signOut());
  $('upgrade').addEventListener('submit', upgrade);
  if (token()) signIn();
})();
