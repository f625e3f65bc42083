//! What a drop link answers: its how-to with the room it has left, and
//! the files it took. Neither holds a URL of the dir or anything of what
//! others dropped.

use schemars::JsonSchema;
use serde::Serialize;
use store_app::{DropRoom, Dropped};

/// `GET /drop/<token>` for agents: what the link takes, and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DropRoomView {
    /// Always true: this is a drop link.
    pub drop: bool,
    /// Files it takes before it is full.
    pub files_left: u32,
    /// Bytes it takes before it is full.
    pub bytes_left: u64,
    /// How to send files to it.
    pub how: String,
}

impl DropRoomView {
    /// The how-to of the link at `url`.
    pub fn new(room: &DropRoom, url: &str) -> Self {
        Self {
            drop: true,
            files_left: room.files_left,
            bytes_left: room.bytes_left,
            how: format!(
                "curl -F file=@report.pdf '{url}' (one -F per file), or curl --data-binary @report.pdf '{url}?name=report.pdf'; the answer lists the names the files were stored under (a name already there gets a number); the files are read by the link's owner only"
            ),
        }
    }
}

/// One file a drop took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DroppedFile {
    /// The name it was stored under.
    pub name: String,
    /// Its size, in bytes.
    pub size: u64,
}

/// `POST /drop/<token>`: the files taken, and nothing else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DroppedView {
    /// Each file taken, in the order sent.
    pub files: Vec<DroppedFile>,
}

impl DroppedView {
    /// The view of what a drop took.
    pub fn new(dropped: &[Dropped]) -> Self {
        Self {
            files: dropped
                .iter()
                .map(|d| DroppedFile {
                    name: d.name.clone(),
                    size: d.size,
                })
                .collect(),
        }
    }
}
