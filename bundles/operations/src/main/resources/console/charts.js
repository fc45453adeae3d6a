// The console's charts: the figures GET /admin/metrics/series samples (every few seconds, the last hour), drawn with
// uPlot and fetched again every sampling interval while the console is shown.
(function () {
  const KEY = 'atrium.operatorToken';
  const $ = (id) => document.getElementById(id);
  const COLOURS = ['#222', '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
  /** At most this many capabilities per chart (the busiest), besides "all". */
  const MAX_LABELS = 8;
  /** The charts: a title, the series names it draws, and how a value is shown. */
  const CHARTS = [
    { id: 'requests', title: 'Requests per second', names: ['requests_per_second'], perCapability: true },
    { id: 'p99', title: 'p99 latency (seconds)', names: ['p99_seconds'], perCapability: true },
    { id: 'errors', title: 'Errors (5xx) per second', names: ['errors_per_second'], perCapability: true },
    { id: 'gate', title: 'Update gate, per interval', names: ['gate_holds', 'gate_held_requests'] },
    { id: 'pool', title: 'Database pool connections', names: ['pool_connections_active', 'pool_connections_open'] },
    { id: 'memory', title: 'Memory (MiB)', names: ['memory_heap_bytes', 'memory_resident_bytes'], scale: 1 / 1048576 },
  ];
  /** The legend's words for the server's own series. */
  const NAMES = {
    gate_holds: 'holds', gate_held_requests: 'held requests', pool_connections_active: 'active',
    pool_connections_open: 'open', memory_heap_bytes: 'heap', memory_resident_bytes: 'resident',
  };
  /** One colour per capability in every chart, given as each is first seen; "all" is black. */
  const colours = { all: COLOURS[0] };

  function colour(capability) {
    if (!(capability in colours)) {
      colours[capability] = COLOURS[1 + ((Object.keys(colours).length - 1) % (COLOURS.length - 1))];
    }
    return colours[capability];
  }
  const plots = {};
  let interval = 5000;

  async function get(path) {
    const response = await fetch(path, { headers: { Authorization: 'Bearer ' + sessionStorage.getItem(KEY) } });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error((data.error && data.error.message) || ('HTTP ' + response.status));
    return data;
  }

  function total(values) {
    return values.reduce((sum, v) => sum + (v || 0), 0);
  }

  /** The series a chart draws: for a per-capability chart, "all" and the busiest capabilities. */
  function pick(chart, series) {
    let chosen = series.filter((s) => chart.names.includes(s.name));
    if (chart.perCapability) {
      const all = chosen.filter((s) => s.label === 'all');
      const rest = chosen.filter((s) => s.label !== 'all').sort((a, b) => total(b.values) - total(a.values));
      chosen = all.concat(rest.slice(0, MAX_LABELS));
    }
    return chosen;
  }

  function container(chart) {
    let box = $('chart-' + chart.id);
    if (!box) {
      box = document.createElement('div');
      box.id = 'chart-' + chart.id;
      box.className = 'chart';
      const h = document.createElement('h3');
      h.textContent = chart.title;
      box.appendChild(h);
      $('charts-list').appendChild(box);
    }
    return box;
  }

  function draw(chart, answer) {
    const chosen = pick(chart, answer.series);
    const box = container(chart);
    const keys = chosen.map((s) => s.name + '/' + s.label).join(',');
    const scale = chart.scale || 1;
    const data = [answer.times].concat(chosen.map((s) => s.values.map((v) => (v === null ? null : v * scale))));
    const first = chosen[0];
    // what the tests read: how many samples and the newest value of the first series ("all")
    box.dataset.points = String(answer.times.length);
    box.dataset.last = first && first.values.length ? String(first.values[first.values.length - 1]) : '';
    const old = plots[chart.id];
    if (old && old.keys === keys) {
      old.plot.setData(data);
      return;
    }
    if (old) old.plot.destroy();
    const opts = {
      width: 560,
      height: 220,
      scales: { x: { time: true } },
      series: [{}].concat(chosen.map((s, i) => ({
        label: chart.perCapability ? s.label : NAMES[s.name] || s.name,
        stroke: chart.perCapability ? colour(s.label) : COLOURS[1 + i],
        width: s.label === 'all' && chart.perCapability ? 2 : 1,
        spanGaps: false,
      }))),
    };
    plots[chart.id] = { keys, plot: new uPlot(opts, data, box) };
  }

  async function poll() {
    if (!$('console').hidden && sessionStorage.getItem(KEY)) {
      try {
        const answer = await get('/admin/metrics/series?minutes=' + $('charts-minutes').value);
        interval = Math.max(1000, answer.interval_seconds * 1000);
        for (const chart of CHARTS) draw(chart, answer);
      } catch (e) {
        $('charts-list').dataset.error = e.message;
      }
    }
    setTimeout(poll, interval);
  }

  $('charts-minutes').addEventListener('change', () => { for (const id in plots) { plots[id].plot.destroy(); delete plots[id]; } });
  poll();
})();
