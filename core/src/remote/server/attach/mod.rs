//! Several clients on one session ([`ServeOptions::attach`]): a client
//! whose `session/load` names a session live on another connection of the
//! same server is attached to it as an observer instead of loading it on
//! its own agent. The connection whose agent hosts the session controls
//! it; observers get its history so far (the agent's messages about it,
//! and the controller's prompts as `user_message_chunk` updates), then
//! every update as it comes; a permission request goes to every client of
//! the session, the first answer wins and the others get `$/cancel_request`
//! for their copy; anything else an observer sends about the session is
//! refused. docs/session-attach.md is the client's view.
//!
//! [`ServeOptions::attach`]: super::ServeOptions::attach

mod board;
mod relay;

pub(crate) use board::Board;
pub use board::ATTACH_META;
pub(crate) use relay::relay;
