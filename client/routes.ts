import type { z, ZodType } from "zod";
import { CONTRACT, PATH_PARAM, type Declared, type RouteKey } from "../src/api/contract.js";

export type { RouteKey };

type PathOf<K extends RouteKey> = K extends `${string} ${infer P}` ? P : never;
type ParamsIn<P extends string> = P extends `${string}:${infer N}/${infer Rest}` ? N | ParamsIn<Rest> : P extends `${string}:${infer N}` ? N : never;
type QueryValue = string | number | boolean | undefined;

/**
 * What a call of the route `K` takes, read off its declaration: the path's parameters, its
 * body's and query's schemas (as a caller writes them), and headers such as `idempotency-key`.
 */
export type RouteInput<K extends RouteKey> = ([ParamsIn<PathOf<K>>] extends [never] ? { params?: undefined } : { params: Record<ParamsIn<PathOf<K>>, string | number> }) &
  (Declared<K> extends { body: infer B extends ZodType } ? { body: z.input<B> } : { body?: undefined }) &
  (Declared<K> extends { query: infer Q extends ZodType } ? { query?: { [P in keyof z.input<Q>]?: QueryValue } } : { query?: undefined }) & {
    headers?: Record<string, string>;
  };

type AlsoAnswer<D> = D extends { also: readonly (infer E)[] } ? (E extends { answer: infer A extends ZodType } ? z.output<A> : never) : never;

/** What the route `K` answers on success, by its declared schemas (its other successes' too). */
export type RouteAnswer<K extends RouteKey> = (Declared<K> extends { answer: infer A extends ZodType } ? z.output<A> : unknown) | AlsoAnswer<Declared<K>>;

/** The request a route's declaration and a call's input make: its path's parameters escaped, its query, its body. */
export function routeRequest(key: RouteKey, input: { params?: Record<string, string | number>; query?: Record<string, QueryValue>; body?: unknown }): { method: string; path: string; body: unknown } {
  const at = key.indexOf(" ");
  const path = key.slice(at + 1).replace(PATH_PARAM, (_, name: string) => {
    const value = input.params?.[name];
    if (value === undefined) throw new TypeError(`${key}: no value for :${name}`);
    return encodeURIComponent(String(value));
  });
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(input.query ?? {})) if (v !== undefined) qs.set(k, String(v));
  return { method: key.slice(0, at), path: qs.size ? `${path}?${qs}` : path, body: input.body };
}

/** The schema the route's success answer must match, if it declares one (its first success's; `also` answers are checked by their own). */
export function answerSchemaOf(key: RouteKey, status: number): ZodType | undefined {
  const row = CONTRACT[key];
  if (status === (row.status ?? 200)) return row.answer;
  return row.also?.find((a) => a.status === status)?.answer ?? row.answer;
}
