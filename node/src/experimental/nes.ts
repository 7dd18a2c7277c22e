// acp-engine/experimental/nes: next edit suggestions (`nes/*`) and document
// notifications (`document/*`), as the official SDK's `experimental/nes`
// offers them: the unstable protocol's API (which has these methods), with
// the method table under the official SDK's keys (`document_did_open`).

import { AGENT_METHODS as UNSTABLE_AGENT_METHODS } from "../unstable.js";
import type {
  NesDocumentDidChangeCapabilitiesSyncKind,
  NesEditSuggestion,
  RejectNesNotificationReason,
  SuggestNesRequestTriggerKind,
} from "../unstable.js";

export * from "../unstable.js";

/** The agent's methods, the NES and document ones under the official SDK's keys too. */
export const AGENT_METHODS = {
  ...UNSTABLE_AGENT_METHODS,
  document_did_open: UNSTABLE_AGENT_METHODS.document_didOpen,
  document_did_change: UNSTABLE_AGENT_METHODS.document_didChange,
  document_did_close: UNSTABLE_AGENT_METHODS.document_didClose,
  document_did_save: UNSTABLE_AGENT_METHODS.document_didSave,
  document_did_focus: UNSTABLE_AGENT_METHODS.document_didFocus,
} as const;

// The official NES schema's names for types ours (from the official Python
// SDK's models) names after where they are used.
/** The reason a suggestion was rejected (`nes/reject`). */
export type NesRejectReason = RejectNesNotificationReason;
/** What triggered a suggestion request (`nes/suggest`). */
export type NesTriggerKind = SuggestNesRequestTriggerKind;
/** How the agent wants document changes delivered (`document/didChange`). */
export type TextDocumentSyncKind = NesDocumentDidChangeCapabilitiesSyncKind;
/** Unique identifier for a next edit suggestion. */
export type NesSuggestionId = NesEditSuggestion["id"];
