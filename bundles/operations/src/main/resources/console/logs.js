// The console's log tail: GET /admin/logs?after=… every second while shown, filtered by level and logger on the
// server; changing a filter reads the ring again. Download asks for the same lines as a file.
(function () {
  const KEY = 'atrium.operatorToken';
  const PERIOD_MS = 1000;
  /** Lines kept on the page; older ones are removed (the download has the whole ring). */
  const MAX_SHOWN = 2000;
  const $ = (id) => document.getElementById(id);
  let after = 0;
  let generation = 0;

  function auth() {
    return { Authorization: 'Bearer ' + sessionStorage.getItem(KEY) };
  }

  function filters() {
    const q = new URLSearchParams();
    if ($('logs-level').value) q.set('level', $('logs-level').value);
    if ($('logs-logger').value.trim()) q.set('logger', $('logs-logger').value.trim());
    return q;
  }

  function show(lines) {
    const box = $('logs-lines');
    const stick = box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
    for (const l of lines) {
      const div = document.createElement('div');
      div.className = l.level;
      div.dataset.seq = l.seq;
      div.dataset.logger = l.logger;
      div.textContent = (l.time ? l.time + ' ' : '') + l.level.padEnd(5) + ' ' + l.logger + ' - ' + l.message;
      box.appendChild(div);
    }
    while (box.childElementCount > MAX_SHOWN) box.firstElementChild.remove();
    if (stick) box.scrollTop = box.scrollHeight;
  }

  async function poll() {
    if ($('console').hidden || !sessionStorage.getItem(KEY) || $('logs-paused').checked) return;
    const mine = generation;
    const q = filters();
    q.set('after', String(after));
    try {
      const response = await fetch('/admin/logs?' + q, { headers: auth() });
      if (!response.ok) return;
      const answer = await response.json();
      if (mine !== generation) return; // the filters changed meanwhile
      show(answer.lines);
      after = answer.next;
    } catch (e) {
      // the server does not answer: the next poll tries again
    }
  }

  function restart() {
    generation++;
    after = 0;
    $('logs-lines').replaceChildren();
    poll();
  }

  async function download() {
    const response = await fetch('/admin/logs/download?' + filters(), { headers: auth() });
    if (!response.ok) return;
    const url = URL.createObjectURL(await response.blob());
    const a = document.createElement('a');
    a.href = url;
    a.download = 'atrium.log';
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }

  $('logs-level').addEventListener('change', restart);
  $('logs-logger').addEventListener('input', restart);
  $('logs-filter').addEventListener('submit', (event) => event.preventDefault());
  $('logs-download').addEventListener('click', download);
  setInterval(poll, PERIOD_MS);
  poll();
})();
