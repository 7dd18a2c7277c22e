// The narrowing guards of the unions with a catch-all variant: the tag, then
// the payload, checked by the engine against the schema.
import assert from "node:assert/strict";
import { test } from "node:test";

import * as stable from "acp-engine";
import * as unstable from "acp-engine/unstable";

const { CreateElicitationRequest, CreateElicitationResponse, MultiSelectItems } = stable;

test("a known tag with a valid payload narrows to its variant, and to no other", () => {
  const form = { sessionId: "s", mode: "form", message: "Name?", requestedSchema: { type: "object", properties: {} } };
  assert.equal(CreateElicitationRequest.isForm(form), true);
  assert.equal(CreateElicitationRequest.isUrl(form), false);
  assert.equal(CreateElicitationRequest.isCustom(form), false);
  assert.equal(CreateElicitationResponse.isAccept({ action: "accept", content: { name: "Ada" } }), true);
  assert.equal(CreateElicitationResponse.isDecline({ action: "decline" }), true);
  assert.equal(CreateElicitationResponse.isCancel({ action: "decline" }), false);
});

test("a known tag with a malformed payload matches no guard", () => {
  const malformed = { action: "accept", content: { bad: { nested: "object" } } };
  assert.equal(CreateElicitationResponse.isAccept(malformed), false);
  assert.equal(CreateElicitationResponse.isCustom(malformed), false);
  // `message` belongs to the request itself, not to the form variant.
  const messageless = { sessionId: "s", mode: "form", requestedSchema: { type: "object", properties: {} } };
  assert.equal(CreateElicitationRequest.isForm(messageless), false);
});

test("an unknown tag is custom; a missing tag is the tag-less variant", () => {
  assert.equal(CreateElicitationResponse.isCustom({ action: "_vendor", extra: 1 }), true);
  const titled = { anyOf: [{ const: "a", title: "A" }] };
  assert.equal(MultiSelectItems.isTitled(titled), true);
  assert.equal(MultiSelectItems.isString(titled), false);
  const vendor = { type: "_vendor", anyOf: [{ const: "a", title: "A" }] };
  assert.equal(MultiSelectItems.isTitled(vendor), false);
  assert.equal(MultiSelectItems.isCustom(vendor), true);
  for (const value of [null, 7, "form", undefined, [1]]) {
    assert.equal(CreateElicitationRequest.isForm(value), false);
    assert.equal(CreateElicitationRequest.isCustom(value), false);
  }
});

test("each entry point has the guards of its schema", () => {
  for (const name of ["CreateElicitationRequest", "CreateElicitationResponse", "ElicitationPropertySchema", "MultiSelectItems", "StateUpdate", "IdleStateUpdate"]) {
    assert.equal(typeof stable[name], "object", name);
    assert.equal(typeof unstable[name], "object", name);
  }
  // Unstable only: session cursors.
  assert.equal(stable.CursorAnchor, undefined);
  assert.equal(unstable.CursorAnchor.isToolCall({ type: "tool_call", toolCallId: "t1", position: "after" }), true);
  assert.equal(unstable.CursorAnchor.isToolCall({ type: "tool_call", position: "after" }), false);
  assert.equal(unstable.CursorAnchor.isCustom({ type: "_vendor" }), true);
});
