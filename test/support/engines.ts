/** Each engine with a simulated model it serves, for tests that run the same scenario on every engine. */
export const EVERY_ENGINE: [engine: string, spec: { engine?: string; model: string }][] = [
  ["pi", { model: "sim-1" }],
  ["engine_b", { engine: "engine_b", model: "gpt-sim" }],
  ["engine_a", { model: "claude-sim" }],
];

/** The engines that keep a session of their own. */
export const SESSION_ENGINES = EVERY_ENGINE.filter(([engine]) => engine !== "pi");
