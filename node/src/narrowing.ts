// What the generated narrowing guards (`generated/guards.ts`) call: a guard
// checks a value's tag, then the whole value with the engine's schema check,
// so a known tag with a malformed payload matches no guard (the wire rejects
// it too).

import { guardCheck } from "./native.js";

function tagOf(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

/** The checks of the stable or the unstable schema of ACP `version`. */
export function narrowing(version: number, unstable: boolean) {
  const valid = (definition: string, value: unknown): boolean => {
    let json: string | undefined;
    try {
      json = JSON.stringify(value);
    } catch {
      return false;
    }
    return json !== undefined && guardCheck(version, unstable, definition, json) === true;
  };
  return {
    /** `value[key]` is `tag`, and `value` a valid `definition`. */
    tagged: (value: unknown, definition: string, key: string, tag: string): boolean =>
      tagOf(value, key) === tag && valid(definition, value),
    /** `value` has no `key`, and is a valid `definition`. */
    untagged: (value: unknown, definition: string, key: string): boolean =>
      tagOf(value, key) === undefined && valid(definition, value),
    /** `value[key]` is a string none of `known`, and `value` a valid `definition`. */
    custom: (value: unknown, definition: string, key: string, known: readonly string[]): boolean => {
      const tag = tagOf(value, key);
      return typeof tag === "string" && !known.includes(tag) && valid(definition, value);
    },
  };
}
