#[path = "it/chat.rs"]
mod chat;
