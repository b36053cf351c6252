import type { Metrics } from "../api/operator.js";

/** The `/metrics` document, as far as Prometheus needs it. */
export type MetricsDoc = Omit<Metrics, "at">;

function label(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** Prometheus text exposition format 0.0.4. */
export function prometheus(m: MetricsDoc): string {
  const lines: string[] = [];
  // Counters are named with _total, as the exposition format's conventions ask.
  const metric = (name: string, type: "gauge" | "counter", help: string, samples: [string, number][]) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`);
  };
  metric("agent_runtime_threads", "gauge", "Threads by archive state.", [
    ['{state="live"}', m.threads.live],
    ['{state="archived"}', m.threads.archived],
  ]);
  metric("agent_runtime_threads_by_stage", "gauge", "Live threads by stage.", Object.entries(m.threads.byStage).map(([s, n]) => [`{stage="${label(s)}"}`, n]));
  metric("agent_runtime_turns_running", "gauge", "Turns running or waiting on a person (live sessions).", [["", m.turns.running]]);
  metric("agent_runtime_session_cap", "gauge", "Live-session cap.", [["", m.turns.sessionCap]]);
  metric("agent_runtime_spawns_paused", "gauge", "1 while the disk keeper pauses spawns.", [["", m.spawnsPaused ? 1 : 0]]);
  if (m.disk) metric("agent_runtime_data_volume_free_bytes", "gauge", "Free bytes on the data volume.", [["", m.disk.freeBytes]]);
  if (m.load) metric("agent_runtime_load_average", "gauge", "Load averages.", [['{window="1m"}', m.load[0]], ['{window="5m"}', m.load[1]], ['{window="15m"}', m.load[2]]]);
  metric("agent_runtime_turn_failures", "gauge", "Failed turns in the incident window (24 h, this boot).", [["", m.failures]]);
  if (m.accounts)
    metric("agent_runtime_accounts", "gauge", "Provider accounts, and how many are cooling down.", [
      ['{state="total"}', m.accounts.total],
      ['{state="cooling"}', m.accounts.coolingDown],
    ]);
  metric("agent_runtime_cost_usd_total", "counter", "Model spend recorded on threads.", [["", m.cost.usd]]);
  metric("agent_runtime_requests_total", "counter", "Requests served since the worker started, by route.", m.requests.map((r) => [`{route="${label(r.route)}"}`, r.count]));
  metric("agent_runtime_request_errors_total", "counter", "Requests answered 5xx, by route.", m.requests.map((r) => [`{route="${label(r.route)}"}`, r.errors]));
  metric(
    "agent_runtime_request_seconds",
    "gauge",
    "Request latency quantiles over the latest requests, by route.",
    m.requests.flatMap((r) => [
      [`{route="${label(r.route)}",quantile="0.5"}`, r.p50Ms / 1000],
      [`{route="${label(r.route)}",quantile="0.99"}`, r.p99Ms / 1000],
    ]),
  );
  return `${lines.join("\n")}\n`;
}
