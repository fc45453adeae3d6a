// The console's health view: GET /admin/status every 2 s while the console is shown (signed in); each part green,
// amber or red. A server that does not answer at all is shown as down too.
(function () {
  const KEY = 'atrium.operatorToken';
  const PERIOD_MS = 2000;
  const $ = (id) => document.getElementById(id);

  async function get(path) {
    const response = await fetch(path, { headers: { Authorization: 'Bearer ' + sessionStorage.getItem(KEY) } });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error((data.error && data.error.message) || ('HTTP ' + response.status));
    return data;
  }

  function mark(element, state, text) {
    element.textContent = text;
    element.dataset.state = state;
    element.classList.remove(...[...element.classList].filter((c) => c.startsWith('state-')));
    element.classList.add('state-' + state);
  }

  function bytes(n) {
    if (n === null || n === undefined) return '-';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return n.toFixed(i === 0 ? 0 : 1) + ' ' + units[i];
  }

  /** A table's rows, one per item; the cell at stateIndex is coloured by its text (a state). */
  function rows(table, items, cellsOf, stateIndex) {
    const body = table.tBodies[0];
    body.replaceChildren();
    for (const item of items) {
      const row = body.insertRow();
      row.dataset.name = item.name;
      cellsOf(item).forEach((text, i) => {
        const td = row.insertCell();
        td.textContent = text;
        if (i === stateIndex) td.className = 'state-' + text;
      });
    }
  }

  function render(s) {
    mark($('health-overall'), s.status, s.status);
    const db = s.database;
    mark($('health-database'), db.status, 'Database: ' + db.status + (db.detail ? ' (' + db.detail + ')' : ''));
    $('health-problems').replaceChildren(...s.problems.map((p) => {
      const li = document.createElement('li');
      li.textContent = p;
      li.className = 'state-down';
      return li;
    }));
    $('health-processes').textContent = 'Processes: ' + s.processes.map((p) => p.name + ' ' + p.running + ' running').join(', ')
      + (s.holding_requests ? '; the kernel holds requests while a capability changes' : '');
    $('health-checks').replaceChildren(...s.checks.map((c) => {
      const li = document.createElement('li');
      li.dataset.name = c.name;
      const title = document.createElement('span');
      mark(title, c.status, c.name + ': ' + c.summary);
      li.appendChild(title);
      if (c.details.length) li.append(' (' + c.details.join('; ') + ')');
      return li;
    }));
    rows($('health-features'), s.features, (f) => [f.name, f.state, f.detail || ''], 1);
    rows($('health-disks'), s.disks, (d) => [d.name, d.path, bytes(d.free_bytes), bytes(d.total_bytes), d.status], 4);
    $('health-checked').textContent = new Date(s.checked_at).toLocaleTimeString();
  }

  async function poll() {
    if ($('console').hidden || !sessionStorage.getItem(KEY)) return;
    try {
      render(await get('/admin/status'));
    } catch (e) {
      mark($('health-overall'), 'down', 'down');
      mark($('health-database'), 'unknown', 'The server does not answer: ' + e.message);
    }
  }

  setInterval(poll, PERIOD_MS);
  poll();
})();
