//! The status line shown while the agent works: a spinner, what it does (thinking, answering,
//! the running tool's title), for how long, and the tokens used so far with what they cost.

use crate::palette::Palette;
use agentry::event::Usage;
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use std::time::Duration;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr as _};

/// The columns the detail may take: `(59m 59s · ↑ 999.9k ↓ 999.9k tokens)`.
const DETAIL_ROOM: usize = 36;

/// The columns a cost adds to it: ` · $999.99`.
const COST_ROOM: usize = 10;

/// The spinner's frames.
const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// The spinner frame for a moment `since` the work began.
pub fn spinner(since: Duration) -> &'static str {
    FRAMES[(since.as_millis() / 80) as usize % FRAMES.len()]
}

/// A duration as `850ms`, `12s` or `3m 05s`.
pub fn elapsed(took: Duration) -> String {
    let seconds = took.as_secs();
    if seconds == 0 {
        format!("{}ms", took.as_millis())
    } else if seconds < 60 {
        format!("{seconds}s")
    } else {
        format!("{}m {:02}s", seconds / 60, seconds % 60)
    }
}

/// A token count as `950`, `12.3k` or `1.2M`.
pub fn tokens(count: u64) -> String {
    match count {
        0..1_000 => count.to_string(),
        1_000..1_000_000 => format!("{:.1}k", count as f64 / 1_000.0),
        _ => format!("{:.1}M", count as f64 / 1_000_000.0),
    }
}

/// Dollars as `$0.0042` under a cent, else `$1.23`.
pub fn dollars(amount: f64) -> String {
    if amount < 0.01 {
        format!("${amount:.4}")
    } else {
        format!("${amount:.2}")
    }
}

/// The status line: `⠹ Running tests… (12s · ↑ 1.2k ↓ 340 tokens · $0.0123)` (the cost
/// when the model has a price), the activity shortened so that it fits `width` columns.
pub fn line(
    activity: &str,
    since: Duration,
    usage: Usage,
    cost_usd: Option<f64>,
    palette: Palette,
    width: u16,
) -> Line<'static> {
    let mut detail = elapsed(since);
    let sent = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens;
    if sent + usage.output_tokens > 0 {
        detail.push_str(&format!(
            " · ↑ {} ↓ {} tokens",
            tokens(sent),
            tokens(usage.output_tokens)
        ));
    }
    if let Some(cost) = cost_usd {
        detail.push_str(&format!(" · {}", dollars(cost)));
    }
    // Room for the longest detail, so that the activity is cut the same way all along (once a
    // cost is known, a little shorter).
    let detail_room = DETAIL_ROOM + if cost_usd.is_some() { COST_ROOM } else { 0 };
    let room = usize::from(width).saturating_sub(detail_room + 4).max(8);
    let activity = shortened(activity.lines().next().unwrap_or_default(), room);
    Line::from(vec![
        Span::styled(
            format!("{} ", spinner(since)),
            palette.paint(Color::Magenta),
        ),
        Span::styled(format!("{activity}… "), palette.paint(Color::Magenta)),
        Span::styled(format!("({detail})"), palette.dim()),
    ])
}

/// `text` cut to `width` columns (the status line's `…` follows it either way).
fn shortened(text: &str, width: usize) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if out.width() + c.width().unwrap_or(0) > width {
            break;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_token_counts_read_short() {
        assert_eq!(elapsed(Duration::from_millis(850)), "850ms");
        assert_eq!(elapsed(Duration::from_secs(12)), "12s");
        assert_eq!(elapsed(Duration::from_secs(185)), "3m 05s");
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(12_345), "12.3k");
        assert_eq!(tokens(1_250_000), "1.2M");
    }

    #[test]
    fn the_status_line_says_what_runs_for_how_long_and_the_tokens() {
        let usage = Usage {
            input_tokens: 1_200,
            output_tokens: 340,
            ..Usage::default()
        };
        let line = line(
            "Running tests",
            Duration::from_secs(12),
            usage,
            None,
            Palette::new(false),
            80,
        );
        let text = line.to_string();
        assert!(
            text.ends_with("Running tests… (12s · ↑ 1.2k ↓ 340 tokens)"),
            "{text}"
        );
        let priced = super::line(
            "Running tests",
            Duration::from_secs(12),
            usage,
            Some(0.0123),
            Palette::new(false),
            80,
        );
        assert!(
            priced
                .to_string()
                .ends_with("(12s · ↑ 1.2k ↓ 340 tokens · $0.01)"),
            "{priced}"
        );
        assert_eq!(dollars(0.00423), "$0.0042");
        assert_eq!(dollars(12.345), "$12.35");
        let long = "Run every test of the workspace with all its features and then the benchmarks";
        let narrow = super::line(
            long,
            Duration::from_secs(12),
            usage,
            None,
            Palette::new(false),
            80,
        );
        assert!(narrow.width() <= 80, "{narrow}");
        assert!(
            narrow
                .to_string()
                .contains("Run every test of the workspace with all… (12s"),
            "{narrow}"
        );
        let priced = super::line(
            long,
            Duration::from_secs(12),
            usage,
            Some(123.45),
            Palette::new(false),
            80,
        );
        assert!(priced.width() <= 80, "{priced}");
        assert!(
            priced
                .to_string()
                .contains("Run every test of the workspac… (12s · ↑ 1.2k ↓ 340 tokens · $123.45)"),
            "{priced}"
        );
    }
}
