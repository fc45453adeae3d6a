// An independent ActivityPub server built on Fedify, for Atrium's federation interop test (FedifyInteropTest).
// Nothing here is Atrium's code: it signs, verifies, resolves and parses with Fedify alone.
//
//   PEER_PORT=8123 node peer.mjs
//
// Fedify serves the actor /users/alice (RSA key for draft-cavage HTTP Signatures), its inbox, and WebFinger. A small
// control API lets the test drive it:
//   POST /control/webfinger {resource}       Fedify's lookupWebFinger
//   POST /control/lookup {id}                Fedify's lookupObject (acct: handle or URL), the parsed object as JSON-LD
//   POST /control/collection {id}            the ids of a collection's items, walked with Fedify's traverseCollection
//   POST /control/follow {object, inbox}     alice sends a Follow (signed by Fedify) to that inbox
//   GET  /control/received                   every activity posted to alice's inbox, with Fedify's verdict on its signature
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { createFederation, generateCryptoKeyPair, MemoryKvStore, verifyRequest } from "@fedify/fedify";
import { Accept, Endpoints, Follow, Person } from "@fedify/vocab";
import { lookupWebFinger } from "@fedify/webfinger";

const port = Number(process.env.PEER_PORT);
const origin = `http://127.0.0.1:${port}`;
const received = [];
const rsa = await generateCryptoKeyPair("RSASSA-PKCS1-v1_5");

const federation = createFederation({
  kv: new MemoryKvStore(),
  allowPrivateAddress: true, // the test's peers all live on loopback
  firstKnock: "draft-cavage-http-signatures-12",
});

federation
  .setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
    if (identifier !== "alice") return null;
    const keys = await ctx.getActorKeyPairs(identifier);
    return new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      name: "Alice of the Fedify peer",
      inbox: ctx.getInboxUri(identifier),
      endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
      publicKey: keys[0].cryptographicKey,
    });
  })
  .setKeyPairsDispatcher(async (_ctx, identifier) => (identifier === "alice" ? [rsa] : []));

federation
  .setInboxListeners("/users/{identifier}/inbox", "/inbox")
  .on(Accept, async (_ctx, accept) => {
    received.push({ via: "listener", type: "Accept", actor: accept.actorId?.href, object: accept.objectId?.href });
  });

const control = federation.createContext(new URL(origin), undefined);

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks);
}

function json(res, status, value) {
  const body = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json" });
  res.end(body);
}

async function controlRoute(path, args, res) {
  switch (path) {
    case "/control/received":
      return json(res, 200, received);
    case "/control/webfinger":
      return json(res, 200, await lookupWebFinger(args.resource, { allowPrivateAddress: true }));
    case "/control/lookup": {
      const object = await control.lookupObject(args.id);
      return object == null ? json(res, 404, { error: "not found" }) : json(res, 200, await object.toJsonLd({ format: "compact" }));
    }
    case "/control/collection": {
      const collection = await control.lookupObject(args.id);
      if (collection == null) return json(res, 404, { error: "not found" });
      const items = [];
      for await (const item of control.traverseCollection(collection)) {
        items.push(item.id?.href ?? null);
        if (items.length >= 1000) break;
      }
      return json(res, 200, { items });
    }
    case "/control/follow": {
      const id = new URL(`${origin}/follows/${randomUUID()}`);
      const follow = new Follow({ id, actor: control.getActorUri("alice"), object: new URL(args.object) });
      await control.sendActivity({ identifier: "alice" }, { id: new URL(args.object), inboxId: new URL(args.inbox) }, follow);
      return json(res, 200, { id: id.href });
    }
    default:
      return json(res, 404, { error: "no such control route" });
  }
}

createServer(async (req, res) => {
  try {
    const url = new URL(req.url, origin);
    const body = await readBody(req);
    if (url.pathname.startsWith("/control/")) {
      return await controlRoute(url.pathname, body.length ? JSON.parse(body.toString("utf8")) : {}, res);
    }
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
    const init = { method: req.method, headers };
    if (req.method !== "GET" && req.method !== "HEAD") init.body = body;
    const request = new Request(url, init);
    if (req.method === "POST" && url.pathname.endsWith("/inbox")) {
      // every delivery, of any type (Push is no ActivityStreams type Fedify's vocabulary knows), with Fedify's own
      // verdict on its HTTP Signature and on whether the signing key belongs to the activity's actor
      const activity = JSON.parse(body.toString("utf8"));
      const key = await verifyRequest(request.clone(), { documentLoader: control.documentLoader, contextLoader: control.contextLoader });
      received.push({
        via: "raw",
        type: activity.type,
        id: activity.id,
        actor: activity.actor,
        verified: key != null,
        keyOwner: key?.ownerId?.href ?? null,
        activity,
      });
    }
    const response = await federation.fetch(request, { contextData: undefined });
    const out = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(out);
  } catch (e) {
    json(res, 500, { error: String(e?.stack ?? e) });
  }
}).listen(port, "127.0.0.1", () => console.log(`fedify peer on ${origin}`));
