package dev.atrium.deploy.workerd.internal;

import dev.atrium.deploy.api.Binding;
import dev.atrium.deploy.api.DeploymentException;
import dev.atrium.deploy.api.DeploymentException.Kind;
import dev.atrium.kernel.api.JsonMappers;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The workflow runner of a worker with {@code workflow} bindings: a second worker {@code r<i>} in the same workerd
 * process (an isolate of its own: the code never sees its bindings), which
 * <ul>
 * <li>is the {@code fetcher} under each workflow binding's {@code cloudflare-internal:workflows-api} wrapper (its
 * entrypoint {@code WorkflowBinding}, with the binding's name in {@code ctx.props}): the wrapper's JS-RPC calls
 * ({@code create}, {@code getInstance}, {@code status}, …) become plain HTTP requests to the binding's endpoint;</li>
 * <li>runs instances: Atrium sends {@code POST /run} to its own loopback socket ({@code endpoint(<deployment id>
 * + "#workflows")}) with the binding's headers; it calls {@code run(event, step)} of the code's class
 * {@code class_name} by JS RPC (a service binding to that named entrypoint of the code's worker), with a
 * {@code step} whose calls are stored through the binding's endpoint.</li>
 * </ul>
 */
final class WorkflowRunner {

    /** The endpoint {@code DeploymentProvider.endpoint} gives the runner of a deployment under: its id plus this. */
    static final String SUFFIX = "#workflows";

    static final Pattern CLASS_NAME = Pattern.compile("[A-Za-z_$][A-Za-z0-9_$]{0,99}");
    static final String MODULE = "cloudflare-internal:workflows-api";

    /** One workflow binding of a worker: its name, its external service, its endpoint base, its class, its headers. */
    record Bound(String name, String up, String base, String className, Map<String, String> headers) {}

    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = JsonMappers.create();

    private WorkflowRunner() {}

    private static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    static boolean has(dev.atrium.deploy.api.Deployment d) {
        return d.bindings().stream().anyMatch(b -> "workflow".equalsIgnoreCase(b.type()));
    }

    /** The binding's value in the code's worker; checks {@code class_name}. */
    static String binding(int index, Binding b) throws DeploymentException {
        String cls = b.options().get("class_name");
        if (cls == null || !CLASS_NAME.matcher(cls).matches()) {
            throw new DeploymentException(
                    Kind.INVALID,
                    "binding " + b.name() + ": a workflow binding needs class_name, a JavaScript identifier");
        }
        return "wrapped = (moduleName = \"" + MODULE + "\", innerBindings = [(name = \"fetcher\", service = (name = \"r"
                + index
                + "\", entrypoint = \"WorkflowBinding\", props = (json = "
                + CapnpConfig.quote(json(Map.of("binding", b.name())))
                + ")))])";
    }

    /** The runner's service and socket entries. */
    static String[] service(int index, int port, List<Bound> bound) {
        Map<String, Object> table = new LinkedHashMap<>();
        List<String> bindings = new ArrayList<>();
        int k = 0;
        for (Bound b : bound) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("up", "up_" + k);
            entry.put("base", b.base());
            entry.put("cls", "cls_" + k);
            entry.put("auth", b.headers());
            table.put(b.name(), entry);
            bindings.add("(name = \"up_" + k + "\", service = \"" + b.up() + "\")");
            bindings.add("(name = \"cls_" + k + "\", service = (name = \"w" + index + "\", entrypoint = "
                    + CapnpConfig.quote(b.className()) + "))");
            k++;
        }
        bindings.add("(name = \"WORKFLOWS\", text = " + CapnpConfig.quote(json(table)) + ")");
        String service = "    (name = \"r" + index
                + "\", worker = (modules = [(name = \"runner.js\", esModule = embed \"m/runner\")], compatibilityDate = \""
                + CapnpConfig.ROUTER_DATE + "\", bindings = [" + String.join(", ", bindings) + "], globalOutbound = \""
                + CapnpConfig.NOWHERE + "\")),\n";
        String socket = "    (name = \"r" + index + "s\", address = \"127.0.0.1:" + port
                + "\", http = (), service = \"r" + index + "\"),\n";
        return new String[] {service, socket};
    }

    /** The runner's module. */
    static final String JS = """
            import { WorkerEntrypoint, RpcTarget } from "cloudflare:workers";

            const DAY = 86400000;
            const UNITS = { millisecond: 1, second: 1000, minute: 60000, hour: 3600000, day: DAY, week: 7 * DAY, month: 30 * DAY, year: 365 * DAY };
            const DEFAULTS = { retries: { limit: 5, delay: 10000, backoff: "exponential" }, timeout: "10 minutes" };
            function ms(d) {
              if (typeof d === "number" && d >= 0) return d;
              const m = /^\\s*(\\d+(?:\\.\\d+)?)\\s*([a-z]+?)s?\\s*$/.exec(String(d));
              const unit = m && UNITS[m[2]];
              if (!unit) throw new TypeError(`Invalid duration "${d}"`);
              return Number(m[1]) * unit;
            }
            const named = (e) => Object.assign(new Error(e?.message ?? ""), { name: e?.name ?? "Error" });
            const plain = (e) => ({ name: e?.name ?? "Error", message: String(e?.message ?? e) });
            const nonRetryable = (e) => e?.name === "NonRetryableError" || String(e?.message).startsWith("NonRetryableError");
            const wait = (t) => new Promise((r) => setTimeout(r, t));
            const enc = encodeURIComponent;

            async function call(env, binding, method, path, body) {
              const w = JSON.parse(env.WORKFLOWS)[binding];
              if (!w) throw new Error(`no workflow binding ${binding}`);
              const init = { method };
              if (body !== undefined) { init.body = JSON.stringify(body); init.headers = { "content-type": "application/json" }; }
              const r = await env[w.up].fetch(new Request(w.base + path, init));
              const text = await r.text();
              let json = null;
              try { json = text ? JSON.parse(text) : null; } catch { json = null; }
              if (!r.ok) {
                const e = json?.error;
                throw Object.assign(new Error(e?.message ?? `the workflow binding failed: ${r.status}`), { name: "WorkflowError" });
              }
              return json;
            }

            export class WorkflowBinding extends WorkerEntrypoint {
              #call(method, path, body) { return call(this.env, this.ctx.props.binding, method, path, body); }
              async create(options) { return this.#call("POST", "instances", { id: options?.id, params: options?.params }); }
              async createBatch(options) {
                if (!Array.isArray(options)) throw new Error("createBatch takes an array of { id?, params? }");
                return this.#call("POST", "instances/batch", options.map((o) => ({ id: o?.id, params: o?.params })));
              }
              async getInstance(id) { return this.#call("GET", `instances/${enc(id)}`); }
              async status(id) { return this.#call("GET", `instances/${enc(id)}/status`); }
              async pause(id) { await this.#call("POST", `instances/${enc(id)}/pause`, {}); }
              async resume(id) { await this.#call("POST", `instances/${enc(id)}/resume`, {}); }
              async terminate(id) { await this.#call("POST", `instances/${enc(id)}/terminate`, {}); }
              async restart(id) { await this.#call("POST", `instances/${enc(id)}/restart`, {}); }
              async deleteInstance(id) { await this.#call("DELETE", `instances/${enc(id)}`); }
              async deleteBatch({ instances }) {
                const deleted = [], errors = [];
                for (const id of instances ?? []) {
                  try { await this.deleteInstance(id); deleted.push({ id }); } catch (e) { errors.push({ id, code: 404, message: String(e?.message ?? e) }); }
                }
                return { deleted, errors };
              }
              async sendEvent() { throw new Error("Atrium's workflows do not take events yet (waitForEvent)"); }
              async subscribe() { throw new Error("Atrium's workflows cannot be subscribed to yet"); }
            }

            class Step extends RpcTarget {
              #env; #binding; #id; #lease; #counts = new Map(); #ended = false;
              constructor(env, binding, id, lease) { super(); this.#env = env; this.#binding = binding; this.#id = id; this.#lease = lease; }
              get ended() { return this.#ended; }
              #key(type, name) {
                if (typeof name !== "string" || name.length === 0 || name.length > 256 || /[\\x00-\\x1f]/.test(name)) {
                  throw Object.assign(new Error(`Step name "${name}" exceeds max length (256 chars) or invalid characters found`), { name: "WorkflowFatalError" });
                }
                const k = `${type}:${name}`;
                const n = (this.#counts.get(k) ?? 0) + 1;
                this.#counts.set(k, n);
                return { key: `${type}:${n}:${name}`, count: n };
              }
              #end() {
                this.#ended = true;
                return Object.assign(new Error("This run of the instance has ended"), { name: "WorkflowAbortedError" });
              }
              async #post(path, body) {
                const a = await call(this.#env, this.#binding, "POST", `runs/${path}`, { instanceId: this.#id, lease: this.#lease, ...body });
                if (a.action === "suspend" || a.action === "abort") throw this.#end();
                return a;
              }
              async do(name, config, callback) {
                if (typeof config === "function") { callback = config; config = {}; }
                if (this.#ended) throw this.#end();
                if (typeof callback !== "function") throw Object.assign(new Error(`Step "${name}" requires a callback function`), { name: "WorkflowFatalError" });
                const cfg = { ...DEFAULTS, ...config, retries: { ...DEFAULTS.retries, ...config?.retries } };
                const retries = { limit: cfg.retries.limit, delay: ms(cfg.retries.delay), backoff: cfg.retries.backoff ?? "exponential" };
                const timeout = ms(cfg.timeout);
                const { key, count } = this.#key("do", name);
                for (;;) {
                  let a = await this.#post("step/begin", { key });
                  while (a.action === "wait") { await wait(a.waitMillis); a = await this.#post("step/begin", { key }); }
                  if (a.action === "replay") return a.value ?? undefined;
                  if (a.action === "throw") throw named(a.error);
                  let value, failure, timer;
                  try {
                    value = await Promise.race([
                      Promise.resolve().then(() => callback({ attempt: a.attempt, step: { name, count }, config: cfg })),
                      new Promise((_, reject) => { timer = setTimeout(() => reject(Object.assign(new Error(`Execution timed out after ${timeout}ms`), { name: "WorkflowTimeoutError" })), timeout); }),
                    ]);
                  } catch (e) {
                    failure = e;
                  } finally {
                    clearTimeout(timer);
                  }
                  if (this.#ended) throw this.#end();
                  if (failure === undefined) {
                    let json;
                    try { json = JSON.parse(JSON.stringify(value === undefined ? null : value)); } catch (e) { failure = e; }
                    if (failure === undefined) {
                      const r = await this.#post("step/complete", { key, value: json });
                      if (r.action === "replay") return r.value ?? undefined;
                      if (r.action === "throw") throw named(r.error);
                      throw this.#end();
                    }
                  }
                  const r = await this.#post("step/fail", { key, error: plain(failure), retryable: !nonRetryable(failure), retries });
                  if (r.action === "throw") throw named(r.error);
                  if (r.action === "wait") await wait(r.waitMillis);
                }
              }
              async sleep(name, duration) {
                if (this.#ended) throw this.#end();
                const { key } = this.#key("sleep", name);
                await this.#post("sleep", { key, durationMs: ms(duration) });
              }
              async sleepUntil(name, timestamp) {
                if (this.#ended) throw this.#end();
                const { key } = this.#key("sleep", name);
                const until = timestamp instanceof Date ? timestamp.getTime() : Number(timestamp);
                await this.#post("sleep", { key, until });
              }
              async waitForEvent() {
                throw Object.assign(new Error("Atrium's workflows do not take events yet (waitForEvent)"), { name: "WorkflowFatalError" });
              }
            }

            function authorised(request, auth) {
              for (const [k, v] of Object.entries(auth ?? {})) if (request.headers.get(k) !== v) return false;
              return Object.keys(auth ?? {}).length > 0;
            }

            export default {
              async fetch(request, env) {
                const url = new URL(request.url);
                if (request.method !== "POST" || url.pathname !== "/run") return new Response("not found", { status: 404 });
                const cmd = await request.json();
                const w = JSON.parse(env.WORKFLOWS)[cmd.binding];
                if (!w || !authorised(request, w.auth)) return new Response("not found", { status: 404 });
                const step = new Step(env, cmd.binding, cmd.instanceId, cmd.lease);
                const event = { payload: cmd.payload, timestamp: new Date(cmd.timestamp), instanceId: cmd.instanceId, workflowName: cmd.workflowName };
                const finish = (body) => call(env, cmd.binding, "POST", "runs/finish", { instanceId: cmd.instanceId, lease: cmd.lease, ...body });
                let output, failure;
                try {
                  output = await env[w.cls].run(event, step);
                } catch (e) {
                  failure = e;
                }
                if (step.ended) return Response.json({ outcome: "ended" });
                if (failure === undefined) {
                  let json;
                  try { json = JSON.parse(JSON.stringify(output === undefined ? null : output)); } catch (e) { failure = e; }
                  if (failure === undefined) {
                    await finish({ output: json });
                    return Response.json({ outcome: "complete" });
                  }
                }
                await finish({ error: plain(failure) });
                return Response.json({ outcome: "errored" });
              }
            };
            """;
}
