// The console's Configuration view: every Atrium PID with its properties, the value each has and where it came from
// (the operator's file, the environment, the default); a value edited here is written to the operator's file in
// <data>/deploy/ (PUT /admin/config/{pid}), a reset removes it from there. Secrets are shown masked.
(function () {
  const { api, send, say, cell, button } = window.atriumConsole;
  const $ = (id) => document.getElementById(id);
  const MASK = '••••';
  let configs = [];

  function shown(value) {
    if (value === null || value === undefined) return '';
    return Array.isArray(value) ? value.join(', ') : String(value);
  }

  // what the operator typed, as JSON: lists split at commas, the rest as text (the server converts and checks it)
  function typed(property, text) {
    if (property.multiple) return text.split(',').map((s) => s.trim()).filter((s) => s !== '');
    return text;
  }

  function render() {
    const filter = $('config-q').value.trim().toLowerCase();
    const list = $('config-list');
    list.replaceChildren();
    for (const c of configs) {
      const matches = !filter || c.pid.toLowerCase().includes(filter) || (c.name || '').toLowerCase().includes(filter)
        || c.properties.some((p) => p.name.toLowerCase().includes(filter));
      if (!matches) continue;
      const section = document.createElement('section');
      section.className = 'config-pid';
      section.dataset.pid = c.pid;
      const title = document.createElement('h3');
      title.textContent = c.pid + (c.name ? ' — ' + c.name : '');
      section.appendChild(title);
      if (c.file) {
        const file = document.createElement('p');
        file.className = 'note';
        file.textContent = 'Operator file: ' + c.file;
        section.appendChild(file);
      }
      const table = document.createElement('table');
      table.className = 'config';
      const head = table.createTHead().insertRow();
      ['Property', 'Value', 'Source', 'Default', ''].forEach((t) => {
        const th = document.createElement('th');
        th.textContent = t;
        head.appendChild(th);
      });
      const body = table.createTBody();
      for (const p of c.properties) {
        const row = body.insertRow();
        row.dataset.property = p.name;
        const name = cell(row, p.name);
        if (p.description) name.title = p.description + (p.type ? ' (' + p.type + ')' : '');
        const valueCell = cell(row, '');
        const input = document.createElement('input');
        input.value = shown(p.value);
        input.size = 30;
        input.setAttribute('aria-label', c.pid + ' ' + p.name);
        if (p.secret) { input.type = 'password'; input.placeholder = p.set ? MASK : '(not set)'; input.value = ''; }
        valueCell.appendChild(input);
        cell(row, p.source + (p.from ? ' (' + p.from + ')' : ''), 'source-' + p.source);
        cell(row, shown(p.default));
        const actions = cell(row, '');
        actions.appendChild(button('Save', () => save(c.pid, p, input.value)));
        if (p.source === 'operator') actions.appendChild(button('Reset', () => reset(c.pid, p.name)));
      }
      section.appendChild(table);
      list.appendChild(section);
    }
  }

  function replace(config) {
    configs = configs.map((c) => (c.pid === config.pid ? config : c));
    render();
  }

  // a 202: the file is written, and ConfigAdmin did not hold it yet when the server stopped waiting
  function pending(answer) {
    return answer.status === 202 ? ' Not applied yet: FileInstall reads the file within seconds; this page shows it then.' : '';
  }

  // ConfigAdmin, FileInstall and the environment's values settle a change in steps, and the answer shows one of them
  // (a 202: not even the file's yet): the page asks again once a second for 10 s and shows what changed since
  async function follow(pid, answer) {
    let shown = JSON.stringify(answer.data.config);
    for (let i = 0; i < 10; i++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      // not while someone types into the list: a new rendering would drop what they typed
      const typing = document.activeElement && document.activeElement.closest
        && document.activeElement.closest('#config-list input');
      if (typing) continue;
      try {
        const config = (await api('GET', '/admin/config/' + encodeURIComponent(pid))).config;
        const now = JSON.stringify(config);
        if (now !== shown) { shown = now; replace(config); }
      } catch (e) {
        return;
      }
    }
  }

  async function save(pid, property, text) {
    if (property.secret && text === '') { say('Type the new value of ' + property.name + ' first.', true); return; }
    try {
      const answer = await send('PUT', '/admin/config/' + encodeURIComponent(pid),
        JSON.stringify({ properties: { [property.name]: typed(property, text) } }));
      replace(answer.data.config);
      say('Saved ' + pid + ' ' + property.name + '.' + pending(answer));
      follow(pid, answer);
    } catch (e) {
      say(e.message, true);
    }
  }

  async function reset(pid, name) {
    try {
      const answer = await send('DELETE', '/admin/config/' + encodeURIComponent(pid) + '/' + encodeURIComponent(name));
      replace(answer.data.config);
      say('Reset ' + pid + ' ' + name + '.' + pending(answer));
      follow(pid, answer);
    } catch (e) {
      say(e.message, true);
    }
  }

  async function load() {
    try {
      configs = (await api('GET', '/admin/config')).configs;
      render();
    } catch (e) {
      if (e.message !== 'unauthorized') say(e.message, true);
    }
  }

  $('config-filter').addEventListener('submit', (event) => { event.preventDefault(); render(); });
  $('config-q').addEventListener('input', render);
  $('config-reload').addEventListener('click', load);
  document.addEventListener('atrium:signed-in', load);
})();
