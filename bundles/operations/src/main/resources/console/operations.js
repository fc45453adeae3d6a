// The console's Operations view: the operator APIs the server has besides features and bundles. Federation deliveries
// (a dead letter sent again), the custom domains' certificates, the OAuth and secret keys (rotated here), the identity
// providers and the deploy directory. Each table loads on its own: a capability switched off leaves its table empty
// with the API's message beside it, and the others still load. Loaded after console.js, whose API helper it uses.
(function () {
  const { api, say, cell, when, button } = window.atriumConsole;
  const $ = (id) => document.getElementById(id);

  function size(bytes) {
    if (bytes === null || bytes === undefined) return '-';
    if (bytes < 1024) return bytes + ' B';
    if (bytes < 1024 * 1024) return (bytes / 1024).toFixed(1) + ' KiB';
    return (bytes / 1024 / 1024).toFixed(1) + ' MiB';
  }

  // fills one table from one route; its note says why it is empty when the route answers an error
  async function section(table, path, fill) {
    const body = $(table).tBodies[0];
    const note = $(table + '-note');
    try {
      const data = await api('GET', path);
      body.replaceChildren();
      note.textContent = fill(data, body) || '';
    } catch (e) {
      if (e.message === 'unauthorized') throw e;
      body.replaceChildren();
      note.textContent = e.message;
    }
  }

  function loadDeliveries() {
    const state = $('deliveries-state').value;
    const params = new URLSearchParams({ limit: '100' });
    if (state) params.set('state', state);
    return section('deliveries', '/admin/federation/deliveries?' + params, (data, body) => {
      for (const d of data.deliveries) {
        const row = body.insertRow();
        row.dataset.delivery = d.id;
        row.dataset.state = d.state;
        cell(row, d.id);
        cell(row, d.inbox);
        cell(row, d.state, d.state === 'dead' ? 'state-failed' : d.state === 'delivered' ? 'state-ok' : '');
        cell(row, String(d.attempts));
        cell(row, d.last_status === null || d.last_status === undefined ? '-' : String(d.last_status));
        cell(row, d.last_error || '');
        cell(row, when(d.created_at));
        const actions = cell(row, '');
        if (d.state === 'dead') actions.appendChild(button('Retry', () => retry(d.id)));
      }
      return data.deliveries.length ? '' : 'No deliveries' + (state ? ' ' + state : '') + '.';
    });
  }

  async function retry(id) {
    try {
      await api('POST', '/admin/federation/deliveries/' + encodeURIComponent(id) + '/retry');
      say('Delivery ' + id + ' is queued again.');
    } catch (e) {
      say(e.message, true);
    }
    await loadDeliveries().catch((e) => say(e.message, true));
  }

  function loadCertificates() {
    return section('certificates', '/admin/certificates', (data, body) => {
      for (const c of data.certificates) {
        const row = body.insertRow();
        row.dataset.host = c.host;
        if (c.state === 'expired' || (c.days_left !== null && c.days_left < 0)) row.className = 'expired';
        else if (c.near_expiry) row.className = 'near-expiry';
        cell(row, c.host);
        cell(row, c.service_id);
        cell(row, c.space_id);
        cell(row, c.domain_status, c.domain_status === 'verified' ? 'state-ok' : '');
        cell(row, c.state + (c.error ? ': ' + c.error : ''),
          c.state === 'active' ? 'state-ok' : c.state === 'failed' || c.state === 'expired' ? 'state-failed' : '');
        cell(row, c.issuer ? c.issuer + (c.self_signed ? ' (self-signed)' : '') + (c.source ? ' · ' + c.source : '') : '-');
        cell(row, when(c.not_before));
        cell(row, when(c.not_after));
        cell(row, c.days_left === null ? '-' : String(c.days_left), c.near_expiry ? 'state-warning' : '');
      }
      return data.certificates.length ? '' : 'No custom domains.';
    });
  }

  function loadOAuthKeys() {
    return section('oauth-keys', '/admin/oauth/keys', (data, body) => {
      for (const k of data.keys) {
        const row = body.insertRow();
        row.dataset.kid = k.kid;
        row.dataset.state = k.state;
        cell(row, k.kid);
        cell(row, k.algorithm);
        cell(row, when(k.created_at));
        cell(row, when(k.signs_from));
        cell(row, k.state, k.state === 'current' ? 'state-ok' : k.state === 'expired' ? 'state-disabled' : '');
        cell(row, when(k.published_until));
        cell(row, k.signing ? 'yes' : '');
      }
      return '';
    });
  }

  async function rotateOAuth(event) {
    event.preventDefault();
    const immediate = $('oauth-rotate-now').checked;
    if (!window.confirm('Make a new OAuth signing key' + (immediate ? ' and sign with it at once' : '') + '?')) return;
    try {
      const r = await api('POST', '/admin/oauth/keys/rotate', JSON.stringify({ immediate }));
      say('New OAuth signing key ' + r.kid + ', signing from ' + when(r.signs_from) + ' UTC; '
        + (r.replaced.length ? r.replaced.join(', ') + ' published until ' + when(r.replaced_published_until) + ' UTC.' : 'it replaces none.'));
    } catch (e) {
      say(e.message, true);
    }
    await loadOAuthKeys().catch((e) => say(e.message, true));
  }

  function loadSecretKeys() {
    return section('secret-keys', '/admin/resources/secret-keys', (data, body) => {
      for (const k of data.keys) {
        const row = body.insertRow();
        row.dataset.key = k.id;
        cell(row, k.id);
        cell(row, k.current ? 'current' : '', k.current ? 'state-ok' : '');
        cell(row, String(k.values));
      }
      return data.keys.length ? '' : 'No secret keys yet.';
    });
  }

  async function rotateSecret() {
    if (!window.confirm('Make a new secret key? New secret values are encrypted with it; older ones keep theirs.')) return;
    try {
      const r = await api('POST', '/admin/resources/secret-keys/rotate');
      say('New secret key ' + r.key_id + ' is current.');
    } catch (e) {
      say(e.message, true);
    }
    await loadSecretKeys().catch((e) => say(e.message, true));
  }

  function loadProviders() {
    return section('identity-providers', '/admin/identity/providers', (data, body) => {
      for (const p of data.providers) {
        const row = body.insertRow();
        row.dataset.provider = p.name;
        [p.name, p.type, p.issuer || '-', p.client_id || '-', p.scopes || '(default)'].forEach((t) => cell(row, t));
      }
      return data.providers.length ? '' : 'No identity providers configured.';
    });
  }

  function loadDeploy() {
    return section('deploy', '/admin/deploy', (data, body) => {
      for (const f of data.files) {
        const row = body.insertRow();
        row.dataset.file = f.name;
        row.dataset.kind = f.kind;
        cell(row, f.name);
        cell(row, f.kind);
        cell(row, size(f.size));
        cell(row, when(f.modified));
        cell(row, f.pid || (f.symbolic_name ? f.symbolic_name + ' ' + f.version : f.kind === 'bundle' ? 'not installed' : '-'));
        cell(row, f.state || '-', f.state === 'ACTIVE' ? 'state-ok' : '');
      }
      return data.directory + (data.files.length ? '' : ': empty')
        + (data.more ? ' (' + data.more + ' more files not listed)' : '');
    });
  }

  async function reload() {
    await Promise.all([loadDeliveries(), loadCertificates(), loadOAuthKeys(), loadSecretKeys(), loadProviders(),
      loadDeploy()]).catch((e) => { if (e.message !== 'unauthorized') say(e.message, true); });
  }

  $('deliveries-filter').addEventListener('submit', (event) => {
    event.preventDefault();
    loadDeliveries().catch((e) => say(e.message, true));
  });
  $('oauth-rotate').addEventListener('submit', rotateOAuth);
  $('secret-rotate').addEventListener('click', rotateSecret);
  $('operations-reload').addEventListener('click', reload);
  document.addEventListener('atrium:signed-in', reload);
})();
