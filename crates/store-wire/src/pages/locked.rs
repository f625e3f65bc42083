//! The pages of private sharing: the password form a browser gets
//! instead of a protected object (one field and a button; it shows
//! nothing of the object, not even its name, and sending it spends
//! nothing: the download comes after), and a drop link's upload page.

use maud::{html, Markup};
use store_app::{DropRoom, Dropped};

use super::*;

/// The password form for the object whose unlock URL is `action` (its own
/// URL with `unlock=1`). `back` is the path the browser asked for, which
/// it returns to after the right password; `problem` says why the form is
/// shown again (a wrong password, too many tries).
pub fn password_page(site: Site<'_>, action: &str, back: &str, problem: Option<&str>) -> Markup {
    shared_page(
        site,
        "Password needed",
        None,
        html! {
            h1 { "Password needed" }
            p { "Whoever shared this link protected it with a password. Type it to open it; nothing is downloaded until you do." }
            @if let Some(problem) = problem {
                p class="error" role="alert" { (problem) }
            }
            form method="post" action=(local(action)) class="password-form" {
                input type="hidden" name="back" value=(back);
                label for="password" { "Password" }
                input id="password" name="password" type="password" required
                    autocomplete="current-password" autofocus
                    minlength=(store_core::password::PASSWORD_CHARS_MIN)
                    maxlength=(store_core::password::PASSWORD_CHARS_MAX);
                button type="submit" { "Open" }
            }
            p class="hint" {
                "In a terminal: " code { "curl -u :<password> <link>" }
            }
        },
    )
}

/// A drop link's page: what it takes, a form to send files (dropped on
/// the page or chosen), and after a send the names the files were stored
/// under. It shows nothing of what anyone else sent.
pub fn drop_page(site: Site<'_>, url: &str, room: &DropRoom, dropped: &[Dropped]) -> Markup {
    shared_page(
        site,
        "Send files",
        None,
        html! {
            h1 { "Send files" }
            p { "Files you send here go to the person who shared this link with you. Only they can see them: you will not see what others sent, and no one else will see yours." }
            @if !dropped.is_empty() {
                div class="notice" role="status" data-dropped="" {
                    p { strong { "Received:" } }
                    ul { @for d in dropped { li { (d.name) " (" (size(d.size)) ")" } } }
                }
            }
            p class="muted" { "It takes " (room.files_left) " more file(s), up to " (size(room.bytes_left)) " in all." }
            form method="post" action=(local(url)) enctype="multipart/form-data" data-upload="drop" data-max=(room.bytes_left) data-max-label=(store_core::limits::binary_size(room.bytes_left)) {
                (file_picker("files", None))
                button type="submit" { "Send" }
            }
            ul class="results" aria-live="polite" {}
            p class="hint" { "In a terminal: " code { "curl -F file=@report.pdf " (url) } }
        },
    )
}
