// What the official SDK's tests import from its internals (modules no user of
// the package can import): each name throws when used, so a test that needs
// one fails with this reason. run.mjs maps those specifiers here.

function internal(name) {
  const fail = () => {
    throw new Error(`not public API: the test uses the official SDK's internal ${name}`);
  };
  return new Proxy(function () {}, { get: fail, apply: fail, construct: fail, has: fail });
}

export const zAnnotations = internal("zAnnotations");
export const zCreateElicitationRequest = internal("zCreateElicitationRequest");
export const zCreateElicitationResponse = internal("zCreateElicitationResponse");
export const zInitializeResponse = internal("zInitializeResponse");
export const zPlan = internal("zPlan");
export const zToolCall = internal("zToolCall");
export const Connection = internal("Connection");
