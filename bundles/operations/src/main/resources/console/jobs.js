// The console's Jobs view: the long jobs capabilities run (repository maintenance, bundle updates, workspace imports)
// with their progress and end, from GET /admin/jobs; every 1.5 s while one runs, every 10 s otherwise. "Run repository
// maintenance now" is POST /admin/repos/maintenance. Loaded after console.js, whose API helper it uses.
(function () {
  const { api, say, cell, when } = window.atriumConsole;
  const $ = (id) => document.getElementById(id);
  const RUNNING_MS = 1500;
  const IDLE_MS = 10000;
  let timer = null;

  function bar(job) {
    const p = document.createElement('progress');
    if (job.total > 0) {
      p.max = job.total;
      p.value = job.done;
    } else if (job.state !== 'running') {
      p.max = 1;
      p.value = job.state === 'succeeded' ? 1 : 0;
    } // else: how much is not known yet, an indeterminate bar
    p.setAttribute('aria-label', job.title);
    return p;
  }

  function render(jobs) {
    const body = $('jobs').tBodies[0];
    body.replaceChildren();
    for (const job of jobs) {
      const row = body.insertRow();
      row.dataset.id = job.id;
      row.dataset.kind = job.kind;
      cell(row, job.title);
      const state = cell(row, job.state, 'job-state state-' + job.state);
      state.dataset.state = job.state;
      const progress = cell(row, '', 'job-progress');
      progress.appendChild(bar(job));
      progress.append(' ' + (job.total > 0 ? job.done + ' of ' + job.total : ''));
      cell(row, job.step || '', 'job-step');
      cell(row, when(job.started_at));
      cell(row, when(job.ended_at));
      cell(row, job.state === 'failed' ? job.reason : (job.summary || ''), 'job-result');
      cell(row, job.bundle);
    }
    $('jobs-empty').hidden = jobs.length > 0;
  }

  async function load() {
    clearTimeout(timer);
    let running = false;
    if (!$('console').hidden && sessionStorage.getItem('atrium.operatorToken')) {
      try {
        const state = $('jobs-state').value;
        const page = await api('GET', '/admin/jobs' + (state ? '?state=' + encodeURIComponent(state) : ''));
        render(page.jobs);
        running = page.jobs.some((j) => j.state === 'running');
        $('jobs-checked').textContent = new Date().toLocaleTimeString();
      } catch (e) {
        $('jobs-checked').textContent = 'failed: ' + e.message;
      }
    }
    timer = setTimeout(load, running ? RUNNING_MS : IDLE_MS);
  }

  $('jobs-run-maintenance').addEventListener('click', async () => {
    try {
      const started = await api('POST', '/admin/repos/maintenance');
      say('Repository maintenance: ' + started.job.title + ' (' + started.job.state + ').');
    } catch (e) {
      say(e.message, true);
    }
    await load();
  });
  $('jobs-state').addEventListener('change', load);
  // signing in shows the console: look at once rather than at the next idle tick
  $('login').addEventListener('submit', () => setTimeout(load, 200));

  load();
})();
