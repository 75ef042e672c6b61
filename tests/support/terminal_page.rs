//! A terminal's screen as a web page, to be photographed: tmux's styled capture
//! (`capture-pane -e`, SGR escape sequences) read by vte and written as HTML spans in a dark
//! terminal's colours.

use std::fmt::Write;

/// The 16 colours of the page's terminal (xterm's defaults, softened).
const PALETTE: [&str; 16] = [
    "#1e1e1e", "#d16969", "#6a9955", "#d7ba7d", "#569cd6", "#c586c0", "#4ec9b0", "#d4d4d4",
    "#808080", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff",
];

/// One cell style.
#[derive(Clone, Default, PartialEq)]
struct Style {
    fg: Option<String>,
    bg: Option<String>,
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
    reverse: bool,
}

impl Style {
    fn css(&self) -> String {
        let (mut fg, mut bg) = (self.fg.clone(), self.bg.clone());
        if self.reverse {
            (fg, bg) = (
                Some(bg.unwrap_or_else(|| PALETTE[0].to_owned())),
                Some(fg.unwrap_or_else(|| PALETTE[7].to_owned())),
            );
        }
        let mut css = String::new();
        if let Some(fg) = fg {
            let _ = write!(css, "color:{fg};");
        }
        if let Some(bg) = bg {
            let _ = write!(css, "background:{bg};");
        }
        for (on, rule) in [
            (self.bold, "font-weight:bold;"),
            (self.dim, "opacity:.6;"),
            (self.italic, "font-style:italic;"),
            (self.underline, "text-decoration:underline;"),
        ] {
            if on {
                css.push_str(rule);
            }
        }
        css
    }
}

/// The 256-colour palette's `index`.
fn indexed(index: u16) -> String {
    match index {
        0..=15 => PALETTE[usize::from(index)].to_owned(),
        16..=231 => {
            let i = index - 16;
            let level = |v: u16| if v == 0 { 0 } else { 55 + v * 40 };
            format!(
                "rgb({},{},{})",
                level(i / 36),
                level(i / 6 % 6),
                level(i % 6)
            )
        }
        _ => {
            let grey = 8 + (index - 232) * 10;
            format!("rgb({grey},{grey},{grey})")
        }
    }
}

/// The HTML being written, a span per run of one style.
#[derive(Default)]
struct Writer {
    html: String,
    style: Style,
    open: Option<Style>,
}

impl Writer {
    fn put(&mut self, text: &str) {
        if self.open.as_ref() != Some(&self.style) {
            if self.open.take().is_some() {
                self.html.push_str("</span>");
            }
            let _ = write!(self.html, "<span style=\"{}\">", self.style.css());
            self.open = Some(self.style.clone());
        }
        for c in text.chars() {
            match c {
                '<' => self.html.push_str("&lt;"),
                '>' => self.html.push_str("&gt;"),
                '&' => self.html.push_str("&amp;"),
                c => self.html.push(c),
            }
        }
    }

    /// Applies an SGR sequence's parameters.
    fn sgr(&mut self, params: &[u16]) {
        let mut params = params.iter().copied();
        while let Some(param) = params.next() {
            let colour = |params: &mut dyn Iterator<Item = u16>| match params.next() {
                Some(5) => params.next().map(indexed),
                Some(2) => {
                    let (r, g, b) = (params.next()?, params.next()?, params.next()?);
                    Some(format!("rgb({r},{g},{b})"))
                }
                _ => None,
            };
            let style = &mut self.style;
            match param {
                0 => *style = Style::default(),
                1 => style.bold = true,
                2 => style.dim = true,
                3 => style.italic = true,
                4 => style.underline = true,
                7 => style.reverse = true,
                22 => (style.bold, style.dim) = (false, false),
                23 => style.italic = false,
                24 => style.underline = false,
                27 => style.reverse = false,
                30..=37 => style.fg = Some(PALETTE[usize::from(param - 30)].to_owned()),
                90..=97 => style.fg = Some(PALETTE[usize::from(param - 82)].to_owned()),
                40..=47 => style.bg = Some(PALETTE[usize::from(param - 40)].to_owned()),
                100..=107 => style.bg = Some(PALETTE[usize::from(param - 92)].to_owned()),
                38 => style.fg = colour(&mut params),
                48 => style.bg = colour(&mut params),
                39 => style.fg = None,
                49 => style.bg = None,
                _ => {}
            }
        }
    }
}

impl vte::Perform for Writer {
    fn print(&mut self, c: char) {
        self.put(c.encode_utf8(&mut [0; 4]));
    }

    fn execute(&mut self, byte: u8) {
        if byte == b'\n' {
            self.put("\n");
        }
    }

    fn csi_dispatch(&mut self, params: &vte::Params, _: &[u8], _: bool, action: char) {
        if action == 'm' {
            let flat: Vec<u16> = params.iter().flatten().copied().collect();
            self.sgr(if flat.is_empty() { &[0] } else { &flat });
        }
    }
}

/// `styled` (a `capture-pane -e` of a `columns`-wide pane) as a page showing it.
pub fn page(styled: &str, columns: u16) -> String {
    let mut writer = Writer::default();
    let mut parser = vte::Parser::new();
    parser.advance(&mut writer, styled.as_bytes());
    if writer.open.is_some() {
        writer.html.push_str("</span>");
    }
    format!(
        "<!doctype html><meta charset=\"utf-8\"><style>body{{margin:0;background:{bg}}}\
         pre{{margin:0;padding:14px 18px;width:{columns}ch;color:{fg};background:{bg};\
         font:14px/1.3 'DejaVu Sans Mono',monospace}}</style><pre>{}</pre>",
        writer.html,
        bg = PALETTE[0],
        fg = PALETTE[7],
    )
}

#[cfg(test)]
mod tests {
    use super::page;

    #[test]
    fn styles_become_spans_and_markup_is_escaped() {
        let html = page(
            "\u{1b}[1;38;5;196mred <b>\u{1b}[0m plain\n\u{1b}[7mrev\u{1b}[m",
            20,
        );
        assert!(
            html.contains(
                "<span style=\"color:rgb(255,0,0);font-weight:bold;\">red &lt;b&gt;</span>"
            ),
            "{html}"
        );
        assert!(html.contains("<span style=\"\"> plain\n</span>"), "{html}");
        assert!(
            html.contains("color:#1e1e1e;background:#d4d4d4;\">rev"),
            "{html}"
        );
        assert!(html.contains("width:20ch"), "{html}");
    }
}
