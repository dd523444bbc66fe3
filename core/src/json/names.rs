//! Repeated member names, compared after Unicode NFC.

use std::borrow::Cow;
use std::collections::HashMap;

use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

/// The member names of one object seen so far, in their NFC forms.
#[derive(Default, Clone)]
pub(super) struct NameSet<'a> {
    /// NFC forms in member order; names already in NFC (all ASCII names are) borrow.
    nfc: Vec<(Cow<'a, str>, Cow<'a, str>)>,
    /// NFC form to member index, built once an object is large enough that a scan would be
    /// quadratic.
    index: Option<HashMap<Cow<'a, str>, usize>>,
}

/// Past this many members, names are found through a hash map rather than a scan.
const LINEAR_NAMES: usize = 16;

impl<'a> NameSet<'a> {
    /// Forgets every name, keeping the memory.
    pub(super) fn clear(&mut self) {
        self.nfc.clear();
        self.index = None;
    }

    /// Adds a name; returns the earlier name (as written) that has the same NFC form, if any.
    pub(super) fn insert(&mut self, name: Cow<'a, str>) -> Option<&str> {
        let nfc = nfc_form(name.clone());
        let earlier = match &mut self.index {
            Some(index) => index.get(&nfc).copied(),
            None => self.nfc.iter().position(|(n, _)| *n == nfc),
        };
        if let Some(i) = earlier {
            return Some(&self.nfc[i].1);
        }
        if let Some(index) = &mut self.index {
            index.insert(nfc.clone(), self.nfc.len());
        } else if self.nfc.len() + 1 == LINEAR_NAMES {
            let mut index: HashMap<Cow<'a, str>, usize> = self
                .nfc
                .iter()
                .enumerate()
                .map(|(i, (n, _))| (n.clone(), i))
                .collect();
            index.insert(nfc.clone(), self.nfc.len());
            self.index = Some(index);
        }
        self.nfc.push((nfc, name));
        None
    }
}

/// The NFC form of a name, borrowing when it already is in NFC.
fn nfc_form(name: Cow<'_, str>) -> Cow<'_, str> {
    if name.is_ascii() || is_nfc_quick(name.chars()) == IsNormalized::Yes {
        return name;
    }
    let normal: String = name.nfc().collect();
    if normal == name {
        name
    } else {
        Cow::Owned(normal)
    }
}
