package acpengine

import (
	"context"
	"sync/atomic"
)

// TerminalHandle is a terminal the agent created on its client
// (AgentSideConnection.CreateTerminal). Release it when done: the client
// then frees it and kills the command if it still runs.
type TerminalHandle struct {
	// ID is the terminal's id on the client.
	ID TerminalId
	// SessionID is the session the terminal belongs to.
	SessionID SessionId
	conn      *AgentSideConnection
	released  atomic.Bool
}

func (c *AgentSideConnection) createTerminal(params *CreateTerminalRequest, result *CreateTerminalResponse) *TerminalHandle {
	return &TerminalHandle{ID: result.TerminalId, SessionID: params.SessionId, conn: c}
}

// CurrentOutput is the output so far, and the exit status once the command
// exited (`terminal/output`).
func (t *TerminalHandle) CurrentOutput(ctx context.Context) (*TerminalOutputResponse, error) {
	return t.conn.TerminalOutput(ctx, &TerminalOutputRequest{SessionId: t.SessionID, TerminalId: t.ID})
}

// WaitForExit waits until the command exits (`terminal/wait_for_exit`).
func (t *TerminalHandle) WaitForExit(ctx context.Context) (*WaitForTerminalExitResponse, error) {
	return t.conn.WaitForTerminalExit(ctx, &WaitForTerminalExitRequest{SessionId: t.SessionID, TerminalId: t.ID})
}

// Kill stops the command; the terminal stays until released
// (`terminal/kill`).
func (t *TerminalHandle) Kill(ctx context.Context) (*KillTerminalResponse, error) {
	return t.conn.KillTerminal(ctx, &KillTerminalRequest{SessionId: t.SessionID, TerminalId: t.ID})
}

// Release frees the terminal, killing the command if it still runs
// (`terminal/release`; only the first call sends it).
func (t *TerminalHandle) Release(ctx context.Context) error {
	if t.released.Swap(true) {
		return nil
	}
	_, err := t.conn.ReleaseTerminal(ctx, &ReleaseTerminalRequest{SessionId: t.SessionID, TerminalId: t.ID})
	return err
}

// Released reports whether Release was called.
func (t *TerminalHandle) Released() bool { return t.released.Load() }
