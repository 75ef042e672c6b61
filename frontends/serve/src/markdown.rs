//! Answers as the page shows them: Markdown rendered to HTML by pulldown-cmark, fenced code
//! highlighted by syntect as classes (coloured by `/highlight.css`), and the whole sanitised by
//! ammonia. A model's answer is untrusted input (it may repeat a poisoned web page), so only
//! markup that cannot run or fetch anything survives: no scripts, handlers, frames, styles or
//! `javascript:` links, no classes but the highlighter's, and no images (a Markdown image
//! becomes a link to it, as an image's address can carry what the model read to another site).

use ammonia::Builder;
use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use std::borrow::Cow;
use std::sync::OnceLock;
use syntect::highlighting::ThemeSet;
use syntect::html::{ClassStyle, ClassedHTMLGenerator, css_for_theme_with_class_style};
use syntect::parsing::{SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

/// The prefix of every class the highlighter gives (the only classes kept).
const CLASS_PREFIX: &str = "hl-";

/// How the highlighter names its classes.
const CLASS_STYLE: ClassStyle = ClassStyle::SpacedPrefixed {
    prefix: CLASS_PREFIX,
};

/// The syntaxes, loaded once per process at the first code block.
fn syntaxes() -> &'static SyntaxSet {
    static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
    SYNTAXES.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// Markdown as sanitised HTML.
pub fn to_html(markdown: &str) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let mut events = Vec::new();
    // The fence's language and the code so far, inside a code block.
    let mut code: Option<(String, String)> = None;
    for event in Parser::new_ext(markdown, options) {
        match (event, code.as_mut()) {
            (Event::Text(text), Some((_, body))) => body.push_str(&text),
            (Event::End(TagEnd::CodeBlock), Some((language, body))) => {
                events.push(Event::Html(highlighted(body, language).into()));
                code = None;
            }
            (Event::Start(Tag::CodeBlock(kind)), _) => {
                let language = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_owned()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                code = Some((language, String::new()));
            }
            (
                Event::Start(Tag::Image {
                    link_type,
                    dest_url,
                    title,
                    id,
                }),
                _,
            ) => events.push(Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            })),
            (Event::End(TagEnd::Image), _) => events.push(Event::End(TagEnd::Link)),
            (event, _) => events.push(event),
        }
    }
    // A block still open (an answer streaming mid-fence) shows what it has so far.
    if let Some((language, body)) = code {
        events.push(Event::Html(highlighted(&body, &language).into()));
    }
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    // The sanitiser's parser checks the elements open at each tag: ten thousand nested ones
    // would take it quadratic time, and its writer recursion.
    let html = agentry_plugin::html_nesting::flattened(&html, MAX_NESTING);
    sanitizer().clean(&html).to_string()
}

/// How deep an answer's elements may nest before the ones inside are shown as their text.
const MAX_NESTING: usize = 64;

/// The highlighter's colours: a light theme, and a dark one under `prefers-color-scheme: dark`.
pub fn highlight_css() -> &'static str {
    static CSS: OnceLock<String> = OnceLock::new();
    CSS.get_or_init(|| {
        let themes = ThemeSet::load_defaults();
        let css = |name: &str| {
            themes
                .themes
                .get(name)
                .and_then(|theme| css_for_theme_with_class_style(theme, CLASS_STYLE).ok())
                .unwrap_or_default()
        };
        format!(
            "{}\n@media (prefers-color-scheme: dark) {{\n{}\n}}\n",
            css("InspiredGitHub"),
            css("base16-ocean.dark")
        )
    })
}

/// `code` in `language` (a fence's first word) as a `<pre>` of highlighted spans; as plain text
/// when syntect does not know the language or fails on it.
fn highlighted(code: &str, language: &str) -> String {
    let syntaxes = syntaxes();
    let plain = syntaxes.find_syntax_plain_text();
    let syntax = syntaxes
        .find_syntax_by_token(language)
        .filter(|_| !language.is_empty())
        .unwrap_or(plain);
    let spans = spans(code, syntax, syntaxes)
        .or_else(|| spans(code, plain, syntaxes))
        .unwrap_or_default();
    format!("<pre class=\"{CLASS_PREFIX}code\"><code>{spans}</code></pre>")
}

/// `code` as `syntax` reads it, in spans named by class.
fn spans(code: &str, syntax: &SyntaxReference, syntaxes: &SyntaxSet) -> Option<String> {
    let mut generator = ClassedHTMLGenerator::new_with_class_style(syntax, syntaxes, CLASS_STYLE);
    for line in LinesWithEndings::from(code) {
        generator
            .parse_html_for_line_which_includes_newline(line)
            .ok()?;
    }
    Some(generator.finalize())
}

/// ammonia's defaults (no scripts, handlers, styles, frames or forms; links to http, https
/// and mailto only, opened without a referrer), without images, and with the highlighter's
/// classes as the only classes.
fn sanitizer() -> &'static Builder<'static> {
    static SANITIZER: OnceLock<Builder<'static>> = OnceLock::new();
    SANITIZER.get_or_init(|| {
        let mut builder = Builder::default();
        builder
            .rm_tags(["img"])
            .add_generic_attributes(["class"])
            .url_schemes(["http", "https", "mailto"].into())
            .link_rel(Some("noopener noreferrer nofollow"))
            .attribute_filter(|_, attribute, value| match attribute {
                "class" => highlighter_classes(value),
                _ => Some(Cow::Borrowed(value)),
            });
        builder
    })
}

/// The classes of `value` the highlighter gives, if any.
fn highlighter_classes(value: &str) -> Option<Cow<'_, str>> {
    let kept: Vec<&str> = value
        .split_whitespace()
        .filter(|class| class.starts_with(CLASS_PREFIX))
        .collect();
    (!kept.is_empty()).then(|| Cow::Owned(kept.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_tables_and_highlighted_code_are_rendered() {
        let html =
            to_html("## Done\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```rust\nfn main() {}\n```\n");
        assert!(html.contains("<h2>Done</h2>"), "{html}");
        assert!(
            html.contains("<table>") && html.contains("<td>1</td>"),
            "{html}"
        );
        assert!(html.contains("<pre class=\"hl-code\">"), "{html}");
        assert!(
            html.contains("class=\"hl-storage hl-type hl-function hl-rust\""),
            "{html}"
        );
        assert!(html.contains(">main<"), "{html}");
    }

    #[test]
    fn an_unclosed_fence_shows_its_code_so_far() {
        let html = to_html("Here:\n\n```python\nprint(1)\n");
        assert!(html.contains("print"), "{html}");
        assert!(html.contains("hl-python"), "{html}");
    }

    #[test]
    fn hostile_markup_is_inert_and_its_text_stays() {
        let html = to_html(
            "Visible text <img src=x onerror=\"alert(1)\"> <script>alert(2)</script>\n\n\
             [click](javascript:alert(3)) <iframe src=\"http://127.0.0.1:9/\"></iframe>\n\n\
             <a href=\"https://example.org\" onclick=\"alert(4)\" class=\"x hl-evil\">link</a>\n\n\
             ![secret](http://127.0.0.1:9/leak?d=1) <span style=\"color:red\">red</span>",
        );
        for inert in [
            "onerror",
            "<script",
            "alert(2)",
            "javascript:",
            "<iframe",
            "onclick",
            "<img",
            "style=",
        ] {
            assert!(!html.contains(inert), "{inert} in {html}");
        }
        assert!(html.contains("Visible text"), "{html}");
        assert!(html.contains("class=\"hl-evil\""), "{html}");
        // The image is a link to its address, fetched only when clicked.
        assert!(
            html.contains("<a href=\"http://127.0.0.1:9/leak?d=1\" rel=\"noopener noreferrer nofollow\">secret</a>"),
            "{html}"
        );
        assert!(html.contains(">red</span>"), "{html}");
    }

    #[test]
    fn other_spellings_of_script_and_fetch_are_inert_too() {
        let attempts = [
            "<a href=\"JaVaScRiPt:alert(1)\">mixed case</a>",
            "<a href=\"java&#x09;script:alert(1)\">encoded tab</a>",
            "<a href=\"&#106;avascript:alert(1)\">entity</a>",
            "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
            "<a href=\"vbscript:msgbox(1)\">vbscript</a>",
            "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mglyph></table></mtext></math>",
            "<svg><animate onbegin=alert(1) attributeName=x dur=1s></svg>",
            "<details open ontoggle=alert(1)>x</details>",
            "<form action=\"http://127.0.0.1:9/\"><button>go</button></form>",
            "<meta http-equiv=\"refresh\" content=\"0;url=http://127.0.0.1:9/\">",
            "<base href=\"http://127.0.0.1:9/\">",
            "<object data=\"http://127.0.0.1:9/x.swf\"></object><embed src=\"http://127.0.0.1:9/\">",
            "<link rel=\"stylesheet\" href=\"http://127.0.0.1:9/x.css\">",
            "<video src=x onerror=alert(1)></video><audio src=x></audio><source src=x>",
            "<div style=\"background:url(http://127.0.0.1:9/)\">styled</div>",
            "<input autofocus onfocus=alert(1)>",
            "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\"></noscript>",
            "`<script>alert(1)</script>` and ```\n<script>alert(1)</script>\n```",
        ];
        for attempt in attempts {
            let html = to_html(attempt).to_lowercase();
            for inert in [
                "<script",
                "javascript:",
                "vbscript:",
                "data:",
                " on",
                "<img",
                "<svg",
                "<math",
                "<form",
                "<meta",
                "<base",
                "<object",
                "<embed",
                "<link",
                "<video",
                "<audio",
                "<source",
                "<input",
                "<noscript",
                "style=",
            ] {
                // In code, the text is shown escaped: `&lt;script` is text, never markup.
                assert!(
                    !html.contains(inert),
                    "{attempt:?} gave {inert:?} in {html}"
                );
            }
        }
        let code = to_html("`<script>alert(1)</script>`");
        assert!(code.contains("&lt;script&gt;"), "{code}");
    }

    #[test]
    fn the_stylesheet_colours_light_and_dark() {
        let css = highlight_css();
        assert!(css.contains(".hl-keyword"), "{css}");
        assert!(css.contains("@media (prefers-color-scheme: dark)"), "{css}");
    }
}
