// A strict OpenID Connect relying party (openid-client) against Atrium as the provider, with headless Chromium as the
// user's browser: discovery and dynamic registration, the code flow with PKCE, state and nonce, prompt=none,
// max_age, prompt=login, a refresh, consent with JavaScript disabled, RP-initiated logout, and a single-page app that
// does the public-client flow over CORS. The client's redirect URIs are served by a small HTTP server of its own on
// 127.0.0.1. Prints one line per step passed; stops at the first failure with a message and exit status 1.
// Usage: node oidc-rp.test.mjs BASE_URL USERNAME PASSWORD OUT_DIR
import { createHash } from 'node:crypto';
import http from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as oidc from 'openid-client';
import { check, launch } from './chromium.mjs';

const [base, username, password, outDir] = process.argv.slice(2);
if (!outDir) throw new Error('usage: node oidc-rp.test.mjs BASE_URL USERNAME PASSWORD OUT_DIR');
const issuer = new URL(base);
const SCOPE = 'openid profile email threads:read';
// Atrium is plain http on loopback in the tests: let openid-client talk to it, for discovery and every later request.
const insecure = { execute: [oidc.allowInsecureRequests] };

// Where the browser is. Atrium's pages, and the client's own (rp, set once its server listens).
let rp;
const onAtrium = (path) => (url) => url.origin === issuer.origin && url.pathname === path;
const isLogin = (url) => url.origin === issuer.origin && url.pathname.startsWith('/auth/login');
const isAuthorize = onAtrium('/oauth/authorize');
const isEndSession = onAtrium('/oauth/end_session');
const onClient = (path) => (url) => url.origin === rp && url.pathname === path;
const isCallback = onClient('/cb');
const isBye = onClient('/bye');
const isSpa = onClient('/spa');

// The client's pages: /cb and /bye just show where the browser arrived; /spa is the single-page app of step 9,
// configured once its public client is registered.
let spaConfig;
const server = http.createServer((request, response) => {
  const { pathname } = new URL(request.url, 'http://127.0.0.1');
  const reply = (status, body) => {
    response.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
    response.end('<!doctype html><meta charset="utf-8"><title>Relying party</title>' + body);
  };
  if (pathname === '/cb') reply(200, '<h1>Callback</h1>');
  else if (pathname === '/bye') reply(200, '<h1>Signed out</h1>');
  else if (pathname === '/spa' && spaConfig) {
    reply(200, `<h1>Single-page app</h1><script>(${spa})(${JSON.stringify(spaConfig).replace(/</g, '\\u003c')});</script>`);
  } else reply(404, '<h1>Not found</h1>');
});

// The single-page app's script, sent to the browser as source (it must not use anything from this module): the
// public-client code flow with PKCE by hand, then UserInfo, discovery and JWKS, all with fetch across origins.
// Writes #result (JSON) or #error into the page.
async function spa({ issuer, clientId, redirectUri, scope }) {
  const show = (id, value) => {
    const element = document.createElement('pre');
    element.id = id;
    element.textContent = typeof value === 'string' ? value : JSON.stringify(value);
    document.body.append(element);
  };
  const base64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const random = (length) => base64url(crypto.getRandomValues(new Uint8Array(length)));
  const json = async (response, what) => {
    if (!response.ok) throw new Error(what + ' answered ' + response.status + ': ' + await response.text());
    return response.json();
  };
  try {
    const metadata = await json(await fetch(issuer + '/.well-known/openid-configuration'), 'discovery');
    const params = new URLSearchParams(location.search);
    if (!params.has('code') && !params.has('error')) {
      const verifier = random(32);
      const state = random(16);
      sessionStorage.setItem('pkce', JSON.stringify({ verifier, state }));
      const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
      const authorize = new URL(metadata.authorization_endpoint);
      authorize.search = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri,
        scope, state, code_challenge: challenge, code_challenge_method: 'S256' }).toString();
      location.assign(authorize.href);
      return;
    }
    const saved = JSON.parse(sessionStorage.getItem('pkce'));
    sessionStorage.removeItem('pkce');
    if (params.has('error')) throw new Error('the authorization failed: ' + params.get('error'));
    if (!saved || params.get('state') !== saved.state) throw new Error('the state came back changed');
    const tokens = await json(await fetch(metadata.token_endpoint, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'authorization_code', code: params.get('code'), redirect_uri: redirectUri,
        client_id: clientId, code_verifier: saved.verifier }),
    }), 'the token endpoint');
    const bearer = { Authorization: 'Bearer ' + tokens.access_token };
    const userinfo = await json(await fetch(metadata.userinfo_endpoint, { headers: bearer }), 'the UserInfo endpoint');
    const jwks = await json(await fetch(metadata.jwks_uri), 'the JWKS');
    let api = 'readable';
    try {
      await fetch(issuer + '/api/me', { headers: bearer });
    } catch (e) {
      api = e.name;
    }
    const revocation = await fetch(metadata.revocation_endpoint, {
      method: 'POST', body: new URLSearchParams({ token: tokens.access_token, token_type_hint: 'access_token', client_id: clientId }),
    });
    show('result', { sub: userinfo.sub, preferred_username: userinfo.preferred_username, token_type: tokens.token_type,
      id_token: typeof tokens.id_token === 'string', keys: Array.isArray(jwks.keys) ? jwks.keys.length : 0, api,
      revocation: revocation.status });
  } catch (e) {
    show('error', String((e && e.stack) || e));
  }
}

// The confidential client's configuration (step 1) and the subject it signs in as.
let config;
let clientId;
let sub;

// A new authorization request: PKCE (S256), state and nonce, and any `extra` parameters (prompt, max_age).
async function authorizationRequest(extra = {}) {
  const request = { verifier: oidc.randomPKCECodeVerifier(), state: oidc.randomState(), nonce: oidc.randomNonce() };
  request.url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: rp + '/cb', scope: SCOPE, state: request.state, nonce: request.nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(request.verifier), code_challenge_method: 'S256', ...extra,
  });
  return request;
}

// The code grant for the browser's callback URL, with every check openid-client can make; `checks` adds maxAge.
function grant(request, callbackUrl, checks = {}) {
  return oidc.authorizationCodeGrant(config, callbackUrl,
    { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce, ...checks });
}

// What openid-client leaves to the client: the ID token is RS256, names this client as azp, says the user signed in
// with a password, has auth_time and (when `atHash`) hashes the access token. Returns its claims.
function idTokenClaims(tokens, what, { atHash = true } = {}) {
  const claims = tokens.claims();
  check(claims, `${what}: the token response has an id_token`);
  const header = JSON.parse(Buffer.from(tokens.id_token.split('.')[0], 'base64url').toString());
  check(header.alg === 'RS256', `${what}: the id_token should be signed with RS256, is ${header.alg}`);
  check(claims.azp === clientId, `${what}: the id_token's azp should be the client ${clientId}, is ${claims.azp}`);
  check(Array.isArray(claims.amr) && claims.amr.includes('pwd'), `${what}: the id_token's amr includes pwd: ${JSON.stringify(claims.amr)}`);
  check(Number.isInteger(claims.auth_time), `${what}: the id_token has auth_time: ${claims.auth_time}`);
  if (atHash || claims.at_hash !== undefined) {
    const hash = createHash('sha256').update(tokens.access_token).digest().subarray(0, 16).toString('base64url');
    check(claims.at_hash === hash, `${what}: the id_token's at_hash should be the access token's ${hash}, is ${claims.at_hash}`);
  }
  return claims;
}

function checkSignedInAt(claims, signedInAt, what) {
  check(Math.abs(claims.auth_time - signedInAt) <= 3,
    `${what}: auth_time should be when the user signed in (${Math.round(signedInAt)}), is ${claims.auth_time}`);
}

// Waits for the browser to show a page `where` accepts; fails saying `what` was expected and where the browser is.
async function arrive(page, where, what) {
  try {
    await page.waitForURL(where);
  } catch {
    throw new Error(`${what}; the browser is at ${page.url()}`);
  }
  return new URL(page.url());
}

// Navigates to `url` and expects nothing but redirects to a page `where` accepts: no page of Atrium's in between.
async function redirectedTo(page, url, where, what) {
  await page.goto(url.href);
  const landed = new URL(page.url());
  check(where(landed), `${what}: expected redirects only, the browser shows ${landed}`);
  return landed;
}

// Signs in on Atrium's login page, through the provider chooser if it shows, and waits until the browser has left
// the sign-in pages. Returns the time of signing in, in seconds.
async function signIn(page, what) {
  await arrive(page, isLogin, `${what}: expected the login page`);
  await page.locator('#username, #provider-local').first().waitFor();
  if (await page.locator('#username').count() === 0) {
    await page.click('#provider-local');
    await page.locator('#username').waitFor();
  }
  await page.fill('#username', username);
  await page.fill('#password', password);
  const signedInAt = Date.now() / 1000;
  await Promise.all([
    arrive(page, (url) => !(url.origin === issuer.origin && url.pathname.startsWith('/auth/')),
      `${what}: signing in leaves the login page`),
    page.click('#submit'),
  ]);
  return signedInAt;
}

// Expects the consent page for this authorization and approves it; returns the URL the browser is sent back to.
async function approve(page, back, what) {
  await arrive(page, isAuthorize, `${what}: expected the consent page`);
  await page.locator('#approve').waitFor();
  await Promise.all([arrive(page, back, `${what}: approving returns to the client`), page.click('#approve')]);
  return new URL(page.url());
}

// Sends the user to the authorization endpoint and expects to be asked to sign in (again), then to come straight
// back (consent already given). Returns the callback URL and the time of signing in.
async function authorizeWithSignIn(page, request, what) {
  await page.goto(request.url.href);
  const signedInAt = await signIn(page, what);
  const callback = await arrive(page, isCallback, `${what}: consent was given, so signing in returns straight to the client`);
  return { callback, signedInAt };
}

// A CORS preflight, made by hand, for a request from `origin` with Authorization and Content-Type headers.
async function preflight(path, origin, method) {
  const response = await fetch(new URL(path, issuer), { method: 'OPTIONS', headers: {
    Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': 'authorization,content-type' } });
  await response.arrayBuffer();
  return response;
}

let title = 'starting';
async function step(name, body) {
  title = name;
  await body();
  console.log('ok ' + name);
}

// A failure's message with what openid-client attached: the chain of causes, OAuth error codes, HTTP statuses.
async function describe(error) {
  const lines = [];
  for (let e = error; e; e = e.cause) {
    if (!(e instanceof Error)) {
      if (e instanceof Response) {
        const body = await e.text().catch(() => '(body already read)');
        lines.push(`HTTP ${e.status} from ${e.url}: ${body.slice(0, 500)}`);
      } else {
        const bytes = (key, value) => (ArrayBuffer.isView(value) ? `(${value.byteLength} bytes)` : value);
        lines.push('details: ' + (e instanceof URLSearchParams ? e.toString() : JSON.stringify(e, bytes)).slice(0, 2000));
      }
      break;
    }
    lines.push([e.message, e.code && `[${e.code}]`, e.error && `error=${e.error}`,
      e.error_description && `(${e.error_description})`, e.status && `HTTP ${e.status}`].filter(Boolean).join(' '));
  }
  return lines.join('\n  caused by: ');
}

let browser;
let page;
try {
  await new Promise((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  rp = `http://127.0.0.1:${server.address().port}`;
  browser = await launch();
  const newPage = async (options = {}) => {
    const context = await browser.newContext(options);
    const p = await context.newPage();
    p.setDefaultTimeout(15000);
    return p;
  };
  page = await newPage();

  let first;
  let tokens;
  let claims;

  await step('1 discovery, and dynamic registration of a confidential client', async () => {
    // RFC 8252 §7.3: the loopback redirect URIs are registered without a port; requests use the client's port.
    const registered = await oidc.dynamicClientRegistration(issuer, {
      client_name: 'Strict relying party',
      redirect_uris: ['http://127.0.0.1/cb'],
      post_logout_redirect_uris: ['http://127.0.0.1/bye'],
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code', 'refresh_token'],
      scope: SCOPE,
    }, oidc.ClientSecretBasic(), insecure);
    const client = registered.clientMetadata();
    clientId = client.client_id;
    check(typeof clientId === 'string' && clientId, 'registration issues a client_id');
    check(typeof client.client_secret === 'string' && client.client_secret, 'registration issues a client_secret');
    check(Number.isInteger(client.client_secret_expires_at),
      'RFC 7591 §3.2.1: with a client_secret comes client_secret_expires_at: ' + client.client_secret_expires_at);
    check(JSON.stringify(client.redirect_uris) === JSON.stringify(['http://127.0.0.1/cb']),
      'RFC 7591 §3.2.1: the response repeats the registered redirect_uris: ' + JSON.stringify(client.redirect_uris));
    check(client.token_endpoint_auth_method === 'client_secret_basic',
      'RFC 7591 §3.2.1: the response repeats token_endpoint_auth_method: ' + client.token_endpoint_auth_method);

    // What a client does later with the credentials it stored: discovery, pinning RS256 and checking ID token
    // signatures against the JWKS (which openid-client skips by default for the token endpoint's answers).
    config = await oidc.discovery(issuer, clientId, { client_secret: client.client_secret, id_token_signed_response_alg: 'RS256' },
      oidc.ClientSecretBasic(), { execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks] });
    const as = config.serverMetadata();
    check(as.issuer === base, `the issuer should be ${base} exactly, is ${as.issuer}`);
    const endpoints = { authorization_endpoint: '/oauth/authorize', token_endpoint: '/oauth/token',
      userinfo_endpoint: '/oauth/userinfo', jwks_uri: '/.well-known/jwks.json', registration_endpoint: '/oauth/register',
      end_session_endpoint: '/oauth/end_session' };
    for (const [name, path] of Object.entries(endpoints)) {
      check(as[name] === base + path, `discovery's ${name} should be ${base + path}, is ${as[name]}`);
    }
    for (const name of ['revocation_endpoint', 'introspection_endpoint']) {
      check(typeof as[name] === 'string' && as[name].startsWith(base + '/'), `discovery lists the ${name}: ${as[name]}`);
    }
    for (const prompt of ['none', 'login', 'consent']) {
      check(as.prompt_values_supported?.includes(prompt), `discovery's prompt_values_supported has ${prompt}`);
    }
    for (const claim of ['auth_time', 'amr']) check(as.claims_supported?.includes(claim), `discovery's claims_supported has ${claim}`);
    // Required by OpenID Connect Discovery 1.0 §3.
    check(as.response_types_supported?.includes('code'), 'discovery\'s response_types_supported has code');
    check(Array.isArray(as.subject_types_supported) && as.subject_types_supported.length, 'discovery lists subject_types_supported');
    check(as.id_token_signing_alg_values_supported?.includes('RS256'), 'discovery\'s id_token_signing_alg_values_supported has RS256');
  });

  await step('2 code flow with PKCE, state, nonce and max_age=300: sign-in, consent, ID token, UserInfo', async () => {
    const request = await authorizationRequest({ max_age: '300' });
    await page.goto(request.url.href);
    const signedInAt = await signIn(page, 'an authorization without a session');
    const scopes = page.locator('#scopes li[data-scope="threads:read"]');
    await arrive(page, isAuthorize, 'after signing in: expected the consent page');
    await page.locator('#approve').waitFor();
    check(await scopes.count() === 1, 'the consent page lists threads:read');
    await page.screenshot({ path: join(outDir, 'oidc-consent.png'), fullPage: true });
    const callback = await approve(page, isCallback, 'the first authorization');
    tokens = await grant(request, callback, { maxAge: 300 });
    first = idTokenClaims(tokens, 'the first code grant');
    checkSignedInAt(first, signedInAt, 'the first code grant');
    sub = first.sub;
    const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, sub);
    check(userinfo.preferred_username === username, `UserInfo's preferred_username should be ${username}, is ${userinfo.preferred_username}`);
  });

  await step('3 prompt=none with a session and consent: a code at once', async () => {
    const request = await authorizationRequest({ prompt: 'none' });
    const callback = await redirectedTo(page, request.url, isCallback, 'prompt=none while signed in and consented');
    claims = idTokenClaims(await grant(request, callback), 'prompt=none');
    check(claims.sub === sub, 'prompt=none signs in the same subject');
    check(claims.auth_time === first.auth_time, `prompt=none should keep the session's auth_time ${first.auth_time}, has ${claims.auth_time}`);
  });

  await step('4 max_age=1 with an older session: sign in again, auth_time advances', async () => {
    await sleep(3000);
    const request = await authorizationRequest({ max_age: '1' });
    const { callback, signedInAt } = await authorizeWithSignIn(page, request, 'max_age=1 with a 3 s old session');
    claims = idTokenClaims(await grant(request, callback, { maxAge: 5 }), 'max_age=1');
    check(claims.sub === sub, 'signing in again with max_age signs in the same subject');
    check(claims.auth_time > first.auth_time, `max_age=1: auth_time ${claims.auth_time} is after the first sign-in's ${first.auth_time}`);
    checkSignedInAt(claims, signedInAt, 'max_age=1');
  });

  await step('5 prompt=login: sign in again, auth_time advances', async () => {
    const before = claims.auth_time;
    await sleep(1100); // auth_time counts whole seconds
    const request = await authorizationRequest({ prompt: 'login' });
    const { callback, signedInAt } = await authorizeWithSignIn(page, request, 'prompt=login');
    tokens = await grant(request, callback, { maxAge: 5 });
    claims = idTokenClaims(tokens, 'prompt=login');
    check(claims.sub === sub, 'prompt=login signs in the same subject');
    check(claims.auth_time > before, `prompt=login: auth_time ${claims.auth_time} is after the previous sign-in's ${before}`);
    checkSignedInAt(claims, signedInAt, 'prompt=login');
  });

  await step('6 refresh: a new ID token with the same subject and the original auth_time', async () => {
    check(typeof tokens.refresh_token === 'string', 'the code grant issues a refresh_token');
    await sleep(1100); // so that an auth_time of "now" would differ
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token);
    const renewed = idTokenClaims(refreshed, 'the refresh', { atHash: false });
    // OpenID Connect Core 1.0 §12.2.
    for (const claim of ['iss', 'sub', 'azp', 'auth_time']) {
      check(JSON.stringify(renewed[claim]) === JSON.stringify(claims[claim]),
        `the refreshed id_token's ${claim} should stay ${JSON.stringify(claims[claim])}, is ${JSON.stringify(renewed[claim])}`);
    }
    check(JSON.stringify([renewed.aud].flat()) === JSON.stringify([claims.aud].flat()), 'the refreshed id_token has the same aud');
    const userinfo = await oidc.fetchUserInfo(config, refreshed.access_token, sub);
    check(userinfo.preferred_username === username, 'the refreshed access token reads UserInfo');
    tokens = refreshed;
  });

  await step('7 prompt=consent with JavaScript disabled: sign-in and consent are plain forms', async () => {
    const plain = await newPage({ javaScriptEnabled: false });
    try {
      const request = await authorizationRequest({ prompt: 'consent' });
      await plain.goto(request.url.href);
      const signedInAt = await signIn(plain, 'without JavaScript');
      await arrive(plain, isAuthorize, 'prompt=consent: expected the consent page');
      check(await plain.locator('form[method="post" i] #approve').count() === 1, 'the consent page\'s #approve submits a POST form');
      const callback = await approve(plain, isCallback, 'consent without JavaScript');
      const consented = idTokenClaims(await grant(request, callback), 'consent without JavaScript');
      check(consented.sub === sub, 'the sign-in without JavaScript is the same subject');
      checkSignedInAt(consented, signedInAt, 'without JavaScript');
    } finally {
      await plain.context().close();
    }
  });

  await step('8 RP-initiated logout: confirm, back at the client with the state, then prompt=none says login_required', async () => {
    const state = oidc.randomState();
    const endSession = (postLogout) => oidc.buildEndSessionUrl(config,
      { id_token_hint: tokens.id_token, post_logout_redirect_uri: rp + postLogout, state });

    const refused = await page.goto(endSession('/elsewhere').href);
    check(refused.status() === 400 && isEndSession(new URL(page.url())),
      `an unregistered post_logout_redirect_uri should get a 400 page, got ${refused.status()} at ${page.url()}`);

    await page.goto(endSession('/bye').href);
    await arrive(page, isEndSession, 'expected the logout confirmation page');
    await page.locator('#logout').waitFor();
    check(await page.locator('#cancel').count() === 1, 'the logout confirmation page offers #cancel');
    await page.screenshot({ path: join(outDir, 'oidc-logout.png'), fullPage: true });
    const bye = (await Promise.all([arrive(page, isBye, 'logging out returns to post_logout_redirect_uri'), page.click('#logout')]))[0];
    check(bye.searchParams.get('state') === state, `logging out should return the state ${state}, returned ${bye.search}`);

    const request = await authorizationRequest({ prompt: 'none' });
    const callback = await redirectedTo(page, request.url, isCallback, 'prompt=none after logging out');
    const failure = await grant(request, callback).then(() => undefined, (e) => e);
    check(failure instanceof oidc.AuthorizationResponseError && failure.error === 'login_required',
      'prompt=none after logging out should answer login_required, answered ' + (failure ? failure.error ?? failure.message : 'a code'));

    const again = await redirectedTo(page, endSession('/bye'), isBye, 'logging out without a session');
    check(again.searchParams.get('state') === state, 'logging out without a session returns the state');
  });

  await step('9 a single-page app: public-client code flow with PKCE over CORS, the session API closed to it', async () => {
    const registered = await oidc.dynamicClientRegistration(issuer, {
      client_name: 'Single-page app',
      redirect_uris: ['http://127.0.0.1/spa'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      scope: SCOPE,
    }, oidc.None(), insecure);
    const client = registered.clientMetadata();
    check(client.client_secret === undefined, 'a public client gets no client_secret');
    spaConfig = { issuer: base, clientId: client.client_id, redirectUri: rp + '/spa', scope: SCOPE };

    const app = await newPage();
    page = app;
    await app.goto(rp + '/spa');
    await signIn(app, 'the single-page app');
    await approve(app, isSpa, 'the single-page app');
    await app.locator('#result, #error').first().waitFor();
    if (await app.locator('#error').count()) throw new Error('the single-page app failed: ' + await app.textContent('#error'));
    const result = JSON.parse(await app.textContent('#result'));
    check(result.sub === sub, `the single-page app reads the user's sub from UserInfo: ${JSON.stringify(result)}`);
    check(result.preferred_username === username, 'the single-page app reads preferred_username');
    check(result.token_type?.toLowerCase() === 'bearer' && result.id_token, 'the single-page app gets a bearer token and an id_token');
    check(result.keys > 0, 'the single-page app reads the JWKS');
    check(result.revocation === 200, 'the single-page app revokes its token: ' + result.revocation);
    check(result.api === 'TypeError', `a cross-origin fetch of /api/me should fail with TypeError, was ${result.api}`);

    // The headers behind it, as the browser saw them.
    for (const path of ['/.well-known/openid-configuration', '/.well-known/jwks.json']) {
      const response = await fetch(new URL(path, issuer), { headers: { Origin: rp } });
      await response.arrayBuffer();
      check(response.headers.get('access-control-allow-origin') === '*', `${path} answers Access-Control-Allow-Origin: *`);
    }
    const as = config.serverMetadata();
    for (const [name, method] of [['token_endpoint', 'POST'], ['userinfo_endpoint', 'GET'], ['revocation_endpoint', 'POST']]) {
      const response = await preflight(as[name], rp, method);
      const headers = response.headers;
      const allowed = (headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/\s*,\s*/);
      check(response.ok && headers.get('access-control-allow-origin') === rp,
        `the ${name}'s preflight from ${rp} is allowed: ${response.status}, ${headers.get('access-control-allow-origin')}`);
      check(allowed.includes('authorization') && allowed.includes('content-type'),
        `the ${name}'s preflight allows Authorization and Content-Type: ${allowed}`);
      check(!headers.has('access-control-allow-credentials'), `the ${name} does not allow credentials`);
      const stranger = await preflight(as[name], 'https://elsewhere.example', method);
      check(!stranger.headers.has('access-control-allow-origin'), `the ${name} refuses an origin no public client registered`);
    }
    const api = await preflight('/api/me', rp, 'GET');
    check(!api.headers.has('access-control-allow-origin'), '/api/me answers no CORS to the single-page app\'s origin');
  });

  console.log('oidc relying party test passed');
} catch (error) {
  console.error(`FAILED in step ${title}:\n  ${await describe(error)}`);
  if (error.stack) console.error(error.stack);
  await page?.screenshot({ path: join(outDir, 'oidc-rp-failure.png'), fullPage: true }).catch(() => {});
  process.exitCode = 1;
} finally {
  await browser?.close();
  server.closeAllConnections();
  server.close();
}
