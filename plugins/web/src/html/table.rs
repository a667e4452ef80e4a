//! The table insertion modes of the fast parser's tree builder (in table, in table body,
//! in row, in cell): implied `<tbody>` and `<tr>`, cells closed by the next cell or row,
//! and the mode reset after `</table>`. Captions, column groups and anything that
//! html5ever would foster-parent out of the table (text or elements between the cells)
//! are refused.

use html5ever::{LocalName, local_name};

use super::Unsupported;
use super::tokens::Token;
use super::tree::{Builder, Mode, Scope, Step, split_space};

fn is_section(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("tbody") | local_name!("thead") | local_name!("tfoot")
    )
}

fn is_cell(name: &LocalName) -> bool {
    matches!(*name, local_name!("td") | local_name!("th"))
}

fn refused<'a>() -> Result<Step<'a>, Unsupported> {
    Err(Unsupported("table markup the fast parser leaves out"))
}

impl Builder {
    /// Pop until the current node is one of `stop` (or `html`/`template`).
    fn clear_back_to(&mut self, stop: fn(&LocalName) -> bool) {
        while let Some((_, n)) = self.open.last() {
            if stop(n) || matches!(*n, local_name!("html") | local_name!("template")) {
                break;
            }
            self.pop();
        }
    }

    pub(super) fn in_table<'a>(&mut self, token: Token<'a>) -> Result<Step<'a>, Unsupported> {
        match token {
            Token::Text(text) => {
                if !split_space(&text).1.is_empty() {
                    return Err(Unsupported("text in a table outside its cells"));
                }
                self.append_text(&text);
            }
            Token::Comment(text) => self.append_comment(text),
            Token::Raw(tag, text)
                if matches!(tag.name, local_name!("script") | local_name!("style")) =>
            {
                self.insert_raw(tag, &text);
            }
            Token::Start(tag) if is_section(&tag.name) => {
                self.clear_back_to(|n| *n == local_name!("table"));
                self.insert(tag);
                self.mode = Mode::InTableBody;
            }
            Token::Start(tag) if is_cell(&tag.name) || tag.name == local_name!("tr") => {
                self.clear_back_to(|n| *n == local_name!("table"));
                self.insert_implied(local_name!("tbody"));
                self.mode = Mode::InTableBody;
                return Ok(Step::Again(Token::Start(tag)));
            }
            Token::End(local_name!("table")) => {
                if !self.in_scope(&local_name!("table"), Scope::Table) {
                    return refused();
                }
                self.pop_until(&local_name!("table"));
                self.reset_mode()?;
            }
            _ => return refused(),
        }
        Ok(Step::Done)
    }

    pub(super) fn in_table_body<'a>(&mut self, token: Token<'a>) -> Result<Step<'a>, Unsupported> {
        match token {
            Token::Start(tag) if tag.name == local_name!("tr") => {
                self.clear_back_to(is_section);
                self.insert(tag);
                self.mode = Mode::InRow;
            }
            Token::Start(tag) if is_cell(&tag.name) => {
                self.clear_back_to(is_section);
                self.insert_implied(local_name!("tr"));
                self.mode = Mode::InRow;
                return Ok(Step::Again(Token::Start(tag)));
            }
            Token::End(name) if is_section(&name) => {
                if !self.in_scope(&name, Scope::Table) {
                    return refused();
                }
                self.clear_back_to(is_section);
                self.pop();
                self.mode = Mode::InTable;
            }
            Token::Start(ref tag) if is_section(&tag.name) => return self.close_section(token),
            Token::End(local_name!("table")) => return self.close_section(token),
            Token::End(
                local_name!("body")
                | local_name!("caption")
                | local_name!("col")
                | local_name!("colgroup")
                | local_name!("html")
                | local_name!("td")
                | local_name!("th")
                | local_name!("tr"),
            ) => return refused(),
            other => return self.in_table(other),
        }
        Ok(Step::Done)
    }

    /// Close the open table section and process `token` again in the table.
    fn close_section<'a>(&mut self, token: Token<'a>) -> Result<Step<'a>, Unsupported> {
        let open = self
            .open
            .iter()
            .rev()
            .take_while(|(_, n)| !matches!(*n, local_name!("table") | local_name!("html")))
            .any(|(_, n)| is_section(n));
        if !open {
            return refused();
        }
        self.clear_back_to(is_section);
        self.pop();
        self.mode = Mode::InTable;
        Ok(Step::Again(token))
    }

    pub(super) fn in_row<'a>(&mut self, token: Token<'a>) -> Result<Step<'a>, Unsupported> {
        match token {
            Token::Start(tag) if is_cell(&tag.name) => {
                self.clear_back_to(|n| *n == local_name!("tr"));
                self.insert(tag);
                self.mode = Mode::InCell;
                self.formatting.push(super::tree::Format::Marker);
            }
            Token::End(local_name!("tr")) => {
                self.close_row()?;
            }
            Token::Start(ref tag) if is_section(&tag.name) || tag.name == local_name!("tr") => {
                self.close_row()?;
                return Ok(Step::Again(token));
            }
            Token::End(local_name!("table")) => {
                self.close_row()?;
                return Ok(Step::Again(token));
            }
            Token::End(ref name) if is_section(name) => {
                if !self.in_scope(name, Scope::Table) {
                    return refused();
                }
                self.close_row()?;
                return Ok(Step::Again(token));
            }
            Token::End(
                local_name!("body")
                | local_name!("caption")
                | local_name!("col")
                | local_name!("colgroup")
                | local_name!("html")
                | local_name!("td")
                | local_name!("th"),
            ) => return refused(),
            other => return self.in_table(other),
        }
        Ok(Step::Done)
    }

    fn close_row(&mut self) -> Result<(), Unsupported> {
        if !self.in_scope(&local_name!("tr"), Scope::Table) {
            return Err(Unsupported("row end without a row"));
        }
        self.clear_back_to(|n| *n == local_name!("tr"));
        self.pop();
        self.mode = Mode::InTableBody;
        Ok(())
    }

    pub(super) fn in_cell<'a>(&mut self, token: Token<'a>) -> Result<Step<'a>, Unsupported> {
        match token {
            Token::End(ref name) if is_cell(name) => {
                if !self.in_scope(name, Scope::Table) {
                    return refused();
                }
                let name = name.clone();
                self.implied_end_tags(None);
                self.pop_until(&name);
                self.clear_formatting_to_marker();
                self.mode = Mode::InRow;
                Ok(Step::Done)
            }
            Token::Start(ref tag)
                if is_cell(&tag.name)
                    || is_section(&tag.name)
                    || matches!(
                        tag.name,
                        local_name!("tr")
                            | local_name!("caption")
                            | local_name!("col")
                            | local_name!("colgroup")
                    ) =>
            {
                self.close_cell()?;
                Ok(Step::Again(token))
            }
            Token::End(
                local_name!("body")
                | local_name!("caption")
                | local_name!("col")
                | local_name!("colgroup")
                | local_name!("html"),
            ) => refused(),
            Token::End(ref name)
                if is_section(name)
                    || matches!(*name, local_name!("table") | local_name!("tr")) =>
            {
                if !self.in_scope(name, Scope::Table) {
                    return refused();
                }
                self.close_cell()?;
                Ok(Step::Again(token))
            }
            other => self.in_body(other),
        }
    }

    fn close_cell(&mut self) -> Result<(), Unsupported> {
        if !self.in_scope(&local_name!("td"), Scope::Table)
            && !self.in_scope(&local_name!("th"), Scope::Table)
        {
            return Err(Unsupported("cell end without a cell"));
        }
        self.implied_end_tags(None);
        self.pop_until_any(is_cell);
        self.clear_formatting_to_marker();
        self.mode = Mode::InRow;
        Ok(())
    }

    /// The mode after the stack changed from below ("reset the insertion mode").
    pub(super) fn reset_mode(&mut self) -> Result<(), Unsupported> {
        for (i, (_, n)) in self.open.iter().enumerate().rev() {
            let last = i == 0;
            let mode = match *n {
                local_name!("td") | local_name!("th") if !last => Mode::InCell,
                local_name!("tr") => Mode::InRow,
                local_name!("tbody") | local_name!("thead") | local_name!("tfoot") => {
                    Mode::InTableBody
                }
                local_name!("table") => Mode::InTable,
                local_name!("body") => Mode::InBody,
                local_name!("select")
                | local_name!("caption")
                | local_name!("colgroup")
                | local_name!("template")
                | local_name!("head")
                | local_name!("frameset")
                | local_name!("html") => return Err(Unsupported("insertion mode reset")),
                _ if last => Mode::InBody,
                _ => continue,
            };
            self.mode = mode;
            return Ok(());
        }
        self.mode = Mode::InBody;
        Ok(())
    }
}
