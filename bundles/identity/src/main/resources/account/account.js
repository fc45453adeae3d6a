// The account page: reads and changes the signed-in person's data through the API with the session cookie; a change
// sends the session's CSRF token (cookie atrium_csrf) in X-CSRF-Token, as the API asks of cookie-authenticated changes.
(function () {
  'use strict';
  const $ = (id) => document.getElementById(id);

  function csrf() {
    const m = document.cookie.match(/(?:^|; )atrium_csrf=([^;]*)/);
    return m ? decodeURIComponent(m[1]) : '';
  }

  function say(text, error) {
    const m = $('message');
    m.textContent = text || '';
    m.className = error ? 'error' : '';
  }

  async function api(method, path, body) {
    const headers = { Accept: 'application/json' };
    if (method !== 'GET') headers['X-CSRF-Token'] = csrf();
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const r = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
    if (r.status === 401) {
      window.location.href = '/auth/login?return_to=%2F';
      throw new Error('signed out');
    }
    const text = await r.text();
    const json = text ? JSON.parse(text) : null;
    if (!r.ok) throw new Error((json && json.error && json.error.message) || (method + ' ' + path + ' failed: ' + r.status));
    return json;
  }

  function cell(row, text) {
    const td = document.createElement('td');
    td.textContent = text == null ? '' : String(text);
    row.appendChild(td);
    return td;
  }

  /** A row saying the table is empty. */
  function none(body, columns, text) {
    if (body.rows.length === 0) {
      const td = body.insertRow().insertCell();
      td.colSpan = columns;
      td.className = 'muted';
      td.textContent = text;
    }
  }

  function day(iso) {
    return iso ? iso.slice(0, 10) : 'never';
  }

  async function loadMe() {
    const me = await api('GET', '/api/me');
    $('username').textContent = me.username || me.name || me.id;
    $('identity').textContent = [me.name, me.email].filter(Boolean).join(' · ');
    $('setup').hidden = Boolean(me.username);
  }

  async function loadSpaces() {
    const j = await api('GET', '/api/spaces');
    const ul = $('spaces');
    ul.replaceChildren();
    (j.spaces || j.items || []).forEach((s) => {
      const li = document.createElement('li');
      li.textContent = (s.name || s.slug) + (s.is_default || s.isDefault ? ' (default)' : '');
      li.dataset.id = s.id;
      ul.appendChild(li);
    });
  }

  async function loadTokens() {
    const j = await api('GET', '/api/me/personal-access-tokens');
    const body = $('tokens').tBodies[0];
    body.replaceChildren();
    j.tokens.forEach((t) => {
      const tr = document.createElement('tr');
      tr.dataset.id = t.id;
      cell(tr, t.name);
      cell(tr, Array.isArray(t.scopes) ? t.scopes.join(' ') : t.scopes);
      cell(tr, t.token_prefix);
      cell(tr, day(t.expires_at));
      cell(tr, day(t.created_at));
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'revoke';
      b.textContent = 'Revoke';
      b.addEventListener('click', () => act(async () => {
        await api('DELETE', '/api/me/personal-access-tokens/' + encodeURIComponent(t.id));
        say('Token ' + t.name + ' revoked.');
        await loadTokens();
      }));
      cell(tr, '').appendChild(b);
      body.appendChild(tr);
    });
    none(body, 6, 'No personal access token yet.');
  }

  async function loadApps() {
    const j = await api('GET', '/api/me/oauth/consents');
    const body = $('apps').tBodies[0];
    body.replaceChildren();
    (j.consents || []).forEach((c) => {
      const tr = document.createElement('tr');
      cell(tr, c.client_name || c.client_id);
      cell(tr, Array.isArray(c.scopes) ? c.scopes.join(' ') : c.scope || c.scopes);
      cell(tr, day(c.created_at || c.granted_at));
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = 'Revoke access';
      b.addEventListener('click', () => act(async () => {
        await api('DELETE', '/api/me/oauth/consents/' + encodeURIComponent(c.client_id));
        say('Access of ' + (c.client_name || c.client_id) + ' revoked.');
        await loadApps();
      }));
      cell(tr, '').appendChild(b);
      body.appendChild(tr);
    });
    none(body, 4, 'No application has been authorized.');
  }

  /** The plan, credit and this month's usage; checkout and the portal are the payment provider's pages. */
  async function loadBilling() {
    const b = (await api('GET', '/api/billing')).billing;
    const u = (await api('GET', '/api/billing/usage')).usage;
    const plan = $('billing-plan');
    if (!b.configured) {
      plan.textContent = b.provider === 'none'
        ? 'Billing is not configured on this server: nothing is charged. Usage is still counted.'
        : b.message;
    } else {
      const sub = b.subscription;
      const credit = b.credit.amount_minor > 0
        ? ' Credit: ' + (b.credit.amount_minor / 100).toFixed(2) + ' ' + b.credit.currency.toUpperCase() + '.'
        : '';
      plan.textContent = (sub
        ? 'Plan: ' + (sub.plan ? sub.plan.name : 'unknown') + ' (' + sub.status + ')'
          + (sub.period_end ? ', renews ' + day(sub.period_end) : '') + '.'
        : 'No subscription.') + credit;
      const select = $('plan');
      select.replaceChildren();
      b.plans.filter((p) => p.price).forEach((p) => {
        const o = document.createElement('option');
        o.value = p.id;
        o.textContent = p.name;
        select.appendChild(o);
      });
      $('subscribe').hidden = Boolean(sub && (sub.status === 'active' || sub.status === 'trialing')) || !select.options.length;
      $('top-up-amount').min = b.top_up.minimum;
      $('top-up-amount').max = b.top_up.maximum;
      $('top-up-unit').textContent = b.top_up.currency.toUpperCase() + ' cents, from ' + b.top_up.minimum + ' to ' + b.top_up.maximum;
      $('billing-actions').hidden = false;
    }
    const body = $('usage').tBodies[0];
    body.replaceChildren();
    u.meters.forEach((m) => {
      const tr = document.createElement('tr');
      tr.dataset.meter = m.meter;
      cell(tr, m.meter.replace(/_/g, ' '));
      cell(tr, m.quantity);
      cell(tr, m.limit == null ? 'none' : m.limit);
      body.appendChild(tr);
    });
    none(body, 3, 'No usage this month.');
  }

  /** Sends the browser to the payment provider's page that {@code path} answers with. */
  function toProvider(path, body, pick) {
    return act(async () => {
      const j = await api('POST', path, body);
      window.location.href = pick(j);
    });
  }

  $('subscribe').addEventListener('submit', (ev) => {
    ev.preventDefault();
    toProvider('/api/billing/subscribe', { plan: $('plan').value }, (j) => j.checkout.url);
  });

  $('top-up').addEventListener('submit', (ev) => {
    ev.preventDefault();
    toProvider('/api/billing/credits/checkout', { amount: Number($('top-up-amount').value) }, (j) => j.checkout.url);
  });

  $('portal').addEventListener('click', () => toProvider('/api/billing/portal', {}, (j) => j.portal.url));

  async function act(fn) {
    try {
      await fn();
    } catch (e) {
      if (e.message !== 'signed out') say(e.message, true);
    }
  }

  $('create-token').addEventListener('submit', (ev) => {
    ev.preventDefault();
    act(async () => {
      const body = { name: $('token-name').value.trim(), scopes: $('token-scopes').value.trim() };
      if ($('token-expires').value) body.expiresAt = $('token-expires').value + 'T23:59:59Z';
      const t = await api('POST', '/api/me/personal-access-tokens', body);
      $('new-token').textContent = t.token;
      $('new-token-box').hidden = false;
      $('create-token').reset();
      say('Token ' + t.name + ' created.');
      await loadTokens();
    });
  });

  $('copy').addEventListener('click', () => act(async () => {
    await navigator.clipboard.writeText($('new-token').textContent);
    say('Copied.');
  }));

  $('setup').addEventListener('submit', (ev) => {
    ev.preventDefault();
    act(async () => {
      await api('POST', '/api/auth/setup-username', { username: $('setup-username').value.trim() });
      await loadMe();
      say('Username saved.');
    });
  });

  $('signout').addEventListener('click', () => act(async () => {
    await api('POST', '/api/auth/logout', {});
    window.location.href = '/auth/login';
  }));

  act(async () => {
    await loadMe();
    await Promise.all([loadSpaces(), loadTokens(), loadApps(), loadBilling()]);
    document.body.dataset.loaded = 'true';
  });
})();
