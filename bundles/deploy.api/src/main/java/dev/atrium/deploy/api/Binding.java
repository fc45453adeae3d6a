package dev.atrium.deploy.api;

import java.net.URI;
import java.util.Map;
import java.util.Objects;

/**
 * A resource the deployed code calls as {@code env.<name>}. The code reaches it through Atrium's internal binding
 * endpoint: {@code endpoint} is the base URL of that resource's internal API on loopback, and {@code headers} must be
 * sent with every request to it (they authenticate the deployment). A provider passes both to the runtime so that the
 * code can use the binding but can never read the headers.
 *
 * <h2>The internal protocol (what the workerd provider sends; measured with workerd 1.20261117.1)</h2>
 *
 * <p>The code sees the runtime's native binding of {@code type} ({@code kv} → {@code KVNamespace}, {@code d1} →
 * {@code D1Database}, {@code r2} → {@code R2Bucket}, {@code queue} → {@code Queue}, {@code workflow} →
 * {@code Workflow}, {@code durableObject} → {@code DurableObjectNamespace}, anything else → a plain {@code Fetcher}).
 * Each call becomes one plain HTTP/1.1 request to the endpoint's host and port (except {@code durableObject}, below):
 * <ul>
 * <li><b>Path</b>: the endpoint's path is kept as a prefix: a binding request for {@code /P?Q} arrives as
 * {@code <endpoint path>/P?Q} (one {@code /} between them). Percent-encoding is kept as sent. {@code Host} is the
 * endpoint's {@code host:port}. A path with a {@code .} or {@code ..} segment (also {@code %2e}-encoded) is refused
 * by the provider with 400 and never sent.</li>
 * <li><b>Authentication</b>: every request carries {@link #headers} (added by the runtime outside the code). The code
 * chooses the key part of the path (and, for a plain {@code Fetcher}, the whole path, method, headers and body), so
 * the endpoint must check that the headers were issued for the resource the path names and answer 404 otherwise.</li>
 * <li>Bodies come with {@code Content-Length} or chunked; the runtime may add headers of its own (e.g.
 * {@code CF-KV-FLPROD-405} on kv), which the endpoint ignores.</li>
 * </ul>
 *
 * <p><b>{@code kv}</b> ({@code key} below is the key percent-encoded as by {@code encodeURIComponent}, so {@code /} is
 * {@code %2F}):
 * <ul>
 * <li>{@code get(key)}, {@code getWithMetadata(key)}: {@code GET /<key>?urlencoded=true} (plus {@code &cache_ttl=N}
 * when asked). Answer 200 with the value's bytes as the body and, when the value has metadata,
 * {@code CF-KV-Metadata: <metadata as JSON>}; 404 when absent (the code gets {@code null}). Any other non-2xx status
 * makes the call throw {@code KV GET failed: <status> <reason>}.</li>
 * <li>{@code get([k1, k2, …], type?)}, {@code getWithMetadata([…])}: {@code POST /bulk/get},
 * {@code Content-Type: application/json}, body {@code {"keys":["k1","k2"],"type":"text"|"json"?,
 * "withMetadata":true?,"cacheTtl":"N"?}} (keys not encoded). Answer 200 JSON object mapping every asked key to its
 * value ({@code null} when absent; a JSON value when {@code type} is {@code json}, else a string), or, with
 * {@code withMetadata}, to {@code {"value":…,"metadata":…|null}}.</li>
 * <li>{@code put(key, value, {expiration?, expirationTtl?, metadata?})}: {@code PUT /<key>?urlencoded=true} plus
 * {@code &expiration=<epoch seconds>} and/or {@code &expiration_ttl=<seconds>} when given; header
 * {@code CF-KV-Metadata: <JSON>} when metadata is given; body the value's bytes (a string is sent as
 * {@code text/plain;charset=UTF-8}). Answer any 2xx (body ignored).</li>
 * <li>{@code delete(key)}: {@code DELETE /<key>?urlencoded=true}. Answer any 2xx (also when absent).</li>
 * <li>{@code list({prefix?, limit?, cursor?})}: {@code GET /?key_count_limit=N&prefix=P&cursor=C}, each parameter
 * only when given ({@code limit} only when above 0). Answer 200 JSON
 * {@code {"keys":[{"name":…,"expiration":N?,"metadata":…?}],"list_complete":bool,"cursor":"…"?}}, which the code
 * receives as it is (the runtime adds {@code cacheStatus}).</li>
 * </ul>
 *
 * <p><b>{@code d1}</b> (workerd's D1 wrapper {@code cloudflare-internal:d1-api} over a Fetcher):
 * <ul>
 * <li>{@code all()}, {@code first()}, {@code raw()}, {@code batch([…])}:
 * {@code POST /query?resultsFormat=ROWS_AND_COLUMNS}; {@code run()} and {@code exec(text)}:
 * {@code POST /execute?resultsFormat=NONE}. {@code Content-Type: application/json}.</li>
 * <li>Body: one statement {@code {"sql":"…","params":[…]}} (params are JSON values, positional for {@code ?} and
 * {@code ?N}), or a JSON array of statements for {@code batch} (run in order, in one transaction) and for
 * {@code exec} (one statement per line of the text, no {@code params}).</li>
 * <li>Answer 200, JSON: for a single statement one result, for an array an array of results in the same order. A
 * result is {@code {"success":true,"results":R,"meta":{"duration":ms,"changes":N,"last_row_id":N,"changed_db":bool,
 * "size_after":bytes,"rows_read":N,"rows_written":N}}} where {@code R} is {@code {"columns":[…],"rows":[[…],…]}} for
 * {@code ROWS_AND_COLUMNS} and an array of row objects for {@code NONE} (or {@code ARRAY_OF_OBJECTS}); a statement
 * that fails is {@code {"success":false,"error":"<message>"}} and the code gets {@code Error("D1_ERROR: <message>")}
 * ({@code D1_EXEC_ERROR: …} from {@code exec}). The status code is not looked at; a body that is not JSON makes the
 * call throw {@code D1_ERROR: Failed to parse body as JSON, got: <body>}.</li>
 * <li>With sessions ({@code withSession()}) the request carries {@code x-cf-d1-session-commit-token}; an answer may
 * set the same header (a bookmark). Optional.</li>
 * </ul>
 *
 * <p><b>{@code r2}</b> (requests carry their arguments as JSON, never in the path, which is {@code /}):
 * <ul>
 * <li>{@code head(key)}, {@code get(key, options?)}, {@code list(options?)}: {@code GET /} with header
 * {@code CF-R2-Request: <JSON>}: {@code {"version":1,"method":"head","object":K}},
 * {@code {"version":1,"method":"get","object":K,"range":{"offset","length","suffix"}?,"rangeHeader":"…"?,
 * "onlyIf":{"etagMatches","etagDoesNotMatch","uploadedBefore","uploadedAfter"}?}},
 * {@code {"version":1,"method":"list","limit":N?,"prefix":"…"?,"cursor":"…"?,"delimiter":"…"?,"startAfter":"…"?,
 * "include":[0 (httpMetadata), 1 (customMetadata)]?,"newRuntime":true}}.
 * Answer 200 with header {@code CF-R2-Metadata-Size: n} and a body of n bytes of JSON metadata followed, for
 * {@code get}, by the object's bytes (of the range when one was asked). Metadata of {@code head}/{@code get}: an
 * object {@code {"name","version","size","etag","uploaded":<epoch ms>,"httpFields":{"contentType","contentLanguage",
 * "contentDisposition","contentEncoding","cacheControl","cacheExpiry"},"customFields":[{"k","v"}],
 * "range":{"offset","length"}?,"checksums":{"0":md5 hex,…}?,"storageClass":"Standard"}}; of {@code list}:
 * {@code {"objects":[<object>…],"truncated":bool,"cursor":"…"?,"delimitedPrefixes":[…]}}.</li>
 * <li>{@code put(key, value, options?)}, {@code delete(key | [keys])} and the multipart calls: {@code PUT /} with
 * header {@code CF-R2-Metadata-Size: n} and a body of n bytes of JSON request followed, for {@code put} and
 * {@code uploadPart}, by the value's bytes: {@code {"version":1,"method":"put","object":K,"customFields":[{"k","v"}],
 * "httpFields":{…}?,"onlyIf":{…}?,"md5":base64?,"sha1"…"sha512":hex?,"storageClass":"…"?}},
 * {@code {"version":1,"method":"delete","object":K}} or {@code {"version":1,"method":"delete","objects":[K…]}},
 * {@code "createMultipartUpload"} {@code {"object","customFields","httpFields","storageClass"}},
 * {@code "uploadPart"} {@code {"object","uploadId","partNumber"}}, {@code "completeMultipartUpload"}
 * {@code {"object","uploadId","parts":[{"etag","part"}]}}, {@code "abortMultipartUpload"} {@code {"object","uploadId"}}.
 * Answer 200 with a JSON body: the object's metadata (as above) for {@code put} and
 * {@code completeMultipartUpload}, {@code {"uploadId"}} for {@code createMultipartUpload}, {@code {"etag"}} for
 * {@code uploadPart}, {@code {}} for {@code delete} and {@code abortMultipartUpload}.</li>
 * <li>Errors: a status of 400 or more with header {@code CF-R2-Error: {"version":0,"v4code":N,"message":"…"}}. A
 * missing object is 404 with v4code 10007 ({@code get}/{@code head} give {@code null}); a failed {@code onlyIf} is
 * 412 with v4code 10031 plus the metadata as for a success without the bytes ({@code get} gives the object without a
 * body, {@code put} gives {@code null}); anything else makes the call throw {@code <action>: <message> (<v4code>)}.</li>
 * </ul>
 *
 * <p><b>{@code queue}</b>:
 * <ul>
 * <li>{@code send(body, {contentType?, delaySeconds?})}: {@code POST /message},
 * {@code Content-Type: application/octet-stream}, {@code X-Msg-Fmt: json} (the default; or {@code text},
 * {@code bytes}, {@code v8} when the code asks), {@code X-Msg-Delay-Secs: N} when given; body the message: JSON text,
 * UTF-8 text, raw bytes, or V8's serialisation for {@code v8}.</li>
 * <li>{@code sendBatch([{body, contentType?, delaySeconds?}], {delaySeconds?})}: {@code POST /batch},
 * {@code Content-Type: application/json}, headers {@code CF-Queue-Batch-Count}, {@code CF-Queue-Batch-Bytes},
 * {@code CF-Queue-Largest-Msg} and {@code X-Msg-Delay-Secs} when given; body
 * {@code {"messages":[{"body":"<base64 of the serialised message>","contentType":"json|text|bytes|v8",
 * "delaySecs":N?}]}}.</li>
 * <li>Answer exactly 200 with JSON {@code {"metadata":{"metrics":{"backlogCount":N,"backlogBytes":N,
 * "oldestMessageTimestamp":<epoch ms, 0 for none>}}}} (the code receives it); any other status makes the call throw
 * {@code <CF-Queues-Error-Cause> (<CF-Queues-Error-Code>)} from those response headers.</li>
 * </ul>
 *
 * <p><b>{@code workflow}</b> (needs {@code options.class_name}, the exported {@code WorkflowEntrypoint} class). workerd's
 * {@code cloudflare-internal:workflows-api} wrapper does not speak HTTP: it makes JS-RPC calls on its {@code fetcher}
 * ({@code create(options)}, {@code createBatch([options])}, {@code getInstance(id)}, {@code status(id)},
 * {@code pause(id)}, {@code resume(id)}, {@code terminate(id, options)}, {@code restart(id, options)},
 * {@code deleteInstance(id)}, {@code deleteBatch({instances})}, {@code sendEvent(id, {type, payload})},
 * {@code subscribe(id, options)}; each answers {@code {id}} or what {@code instance.status()} returns, and an Error
 * thrown reaches the code as it is). The workerd provider's runner worker is that {@code fetcher} and turns each call
 * into one HTTP request to the endpoint (JSON bodies; errors are the spec body with a 4xx, whose message the code's call
 * throws):
 * <ul>
 * <li>{@code POST /instances} {@code {"id"?,"params"?}} → 201 {@code {"id"}} (409 {@code instance.already_exists…});
 * {@code POST /instances/batch} {@code [{"id"?,"params"?}…]} (1–100) → 201 {@code [{"id"}…]};
 * {@code GET /instances/<id>} → {@code {"id"}} (404 {@code instance.not_found…});
 * {@code GET /instances/<id>/status} → {@code {"status":"queued|running|paused|waiting|errored|terminated|complete",
 * "output":…|null,"error":{"name","message"}?}}; {@code POST /instances/<id>/pause|resume|terminate|restart} and
 * {@code DELETE /instances/<id>} → {@code {}} (409 when the status does not allow it).</li>
 * <li>A run's steps (sent by the runner while it runs an instance; each body carries {@code instanceId} and the run's
 * {@code lease}): {@code POST /runs/step/begin} {@code {"key":"do:<n>:<name>"}}, {@code POST /runs/step/complete}
 * {@code {"key","value"}}, {@code POST /runs/step/fail} {@code {"key","error":{"name","message"},"retryable",
 * "retries":{"limit","delay":ms,"backoff"}}}, {@code POST /runs/sleep} {@code {"key":"sleep:<n>:<name>",
 * "durationMs"|"until":epoch ms}} answer {@code {"action":"replay","value"}} (return the stored result),
 * {@code {"action":"throw","error"}}, {@code {"action":"run","attempt"}}, {@code {"action":"wait","waitMillis"}} (ask
 * again after a short retry delay), {@code {"action":"suspend"}} or {@code {"action":"abort"}} (end the run);
 * {@code POST /runs/finish} {@code {"output"} | {"error":{"name","message"}}} → {@code {"finished":bool}}.</li>
 * <li>Atrium starts a run with {@code POST /run} on the runner's own loopback socket (the provider's
 * {@code endpoint(<deployment id> + "#workflows")}) with this binding's {@link #headers} and
 * {@code {"binding","instanceId","lease","payload","timestamp":epoch ms,"workflowName"}}; the runner calls
 * {@code run(event, step)} of {@code class_name} by RPC and answers {@code {"outcome":"complete|errored|ended"}}.</li>
 * </ul>
 *
 * <p><b>{@code durableObject}</b> (needs {@code options.class_name}, the class the service's own code exports,
 * {@code options.unique_key}, which names the objects' storage, and {@code options.storage}, the directory that keeps
 * it): the runtime runs the objects itself; no call reaches the endpoint.
 *
 * <p><b>Any other type</b>: a plain {@code Fetcher}; {@code env.X.fetch(url, init)} arrives with the path and query
 * of {@code url} below the endpoint's path, and the code's method, headers and body.
 *
 * @param name     the variable name the code sees, e.g. {@code MY_KV}
 * @param type     the resource type: {@code kv}, {@code d1}, {@code r2}, {@code queue}, …
 * @param endpoint the internal endpoint's base URL for this resource
 * <p><b>{@code options}</b> are the binding's settings that are not secret and that the runtime itself needs, for a
 * type whose binding is more than calls to the endpoint (e.g. the class a {@code durableObject} or {@code workflow}
 * binding names). Types without settings have none.
 *
 * @param headers  headers that authenticate the deployment; secret
 * @param options  the type's non-secret settings for the runtime, e.g. {@code class_name}; empty for most types
 */
public record Binding(String name, String type, URI endpoint, Map<String, String> headers, Map<String, String> options) {

    public Binding {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(endpoint, "endpoint");
        headers = headers == null ? Map.of() : Map.copyOf(headers);
        options = options == null ? Map.of() : Map.copyOf(options);
    }

    /** A binding whose type has no runtime settings. */
    public Binding(String name, String type, URI endpoint, Map<String, String> headers) {
        this(name, type, endpoint, headers, Map.of());
    }

    @Override
    public String toString() {
        return "Binding[" + name + ": " + type + " at " + endpoint + "]";
    }
}
