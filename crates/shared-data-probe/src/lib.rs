//! `#[needs_shared_data]`, for a test that reads the shared reference data
//! (`$ROADSCAN_SHARED_DATA`, default `../shared/data` from the workspace root): where they are
//! missing and `CI` is not `true`, the test is marked `#[ignore]` with a reason naming the folder,
//! so cargo shows it `ignored`, never `ok`. Under `CI=true` it stays as written: it runs, and
//! `roadscan_tests::shared_data()` fails it. Re-exported as `roadscan_tests::needs_shared_data`.
//!
//! Put it above `#[test]`. The build script decides (`cfg(shared_data_missing)`) and is rerun
//! when the data come or go, so the tests are rebuilt to match.

use proc_macro::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};

/// Marks the test `#[ignore = "needs the shared data ..."]` when the shared reference data are
/// missing outside CI; leaves it untouched otherwise, or when it is already `#[ignore]`d.
#[proc_macro_attribute]
pub fn needs_shared_data(attr: TokenStream, item: TokenStream) -> TokenStream {
    if let Some(t) = attr.into_iter().next() {
        return error(t.span(), "#[needs_shared_data] takes no arguments");
    }
    if cfg!(shared_data_missing) && !is_ignored(&item) {
        let reason = format!(
            "needs the shared data, missing at {} (set ROADSCAN_SHARED_DATA; default ../shared/data)",
            env!("ROADSCAN_SHARED_DATA_DIR")
        );
        let mut out = attribute("ignore", Some(reason));
        out.extend(item);
        return out;
    }
    item
}

/// Whether the item already carries an outer `#[ignore ...]` (a second one would be refused).
fn is_ignored(item: &TokenStream) -> bool {
    let mut hash = false;
    for t in item.clone() {
        match t {
            TokenTree::Punct(p) if p.as_char() == '#' => hash = true,
            TokenTree::Group(g) if hash && g.delimiter() == Delimiter::Bracket => {
                if matches!(g.stream().into_iter().next(), Some(TokenTree::Ident(i)) if i.to_string() == "ignore") {
                    return true;
                }
                hash = false;
            }
            _ => hash = false,
        }
    }
    false
}

/// `#[name]` or `#[name = "value"]`.
fn attribute(name: &str, value: Option<String>) -> TokenStream {
    let mut inner = vec![TokenTree::Ident(Ident::new(name, Span::call_site()))];
    if let Some(v) = value {
        inner.push(TokenTree::Punct(Punct::new('=', Spacing::Alone)));
        inner.push(TokenTree::Literal(Literal::string(&v)));
    }
    [
        TokenTree::Punct(Punct::new('#', Spacing::Alone)),
        TokenTree::Group(Group::new(Delimiter::Bracket, inner.into_iter().collect())),
    ]
    .into_iter()
    .collect()
}

/// `compile_error!("message");` at `span`.
fn error(span: Span, message: &str) -> TokenStream {
    let mut lit = Literal::string(message);
    lit.set_span(span);
    let tokens = [
        TokenTree::Ident(Ident::new("compile_error", span)),
        TokenTree::Punct(Punct::new('!', Spacing::Alone)),
        TokenTree::Group(Group::new(Delimiter::Parenthesis, TokenTree::Literal(lit).into())),
        TokenTree::Punct(Punct::new(';', Spacing::Alone)),
    ];
    tokens.into_iter().collect()
}
