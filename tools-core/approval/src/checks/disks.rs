//! Block-device destroyers besides `mkfs`, `dd`, `wipefs` and `shred`: `cryptsetup
//! luksFormat`/`erase`, `badblocks -w`, `hdparm --security-erase`/`--trim-sector-ranges`,
//! `nvme format`/`sanitize`, `sg_format`, `blkdiscard` (in `files`). Aimed at a raw device
//! they are hardline; read-only modes (`badblocks` without `-w`, `hdparm -I`) are not.

use super::super::analyze::Analyzer;
use super::super::model::Arg;
use super::super::paths;
use super::super::rules;

/// Whether any argument names a raw block device.
fn on_device(args: &[Arg<'_>]) -> bool {
    args[1..]
        .iter()
        .any(|a| paths::is_raw_device(a.as_str(), a.dynamic))
}

/// `cryptsetup`, `badblocks`, `hdparm`, `nvme`, `sg_format`.
pub(crate) fn destroyer(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    let has = |flags: &[&str]| args[1..].iter().any(|a| flags.contains(&a.as_str()));
    let destructive = match name {
        "cryptsetup" => has(&["luksFormat", "erase", "luksErase", "reencrypt"]),
        "badblocks" => args[1..].iter().any(|a| {
            let w = a.as_str();
            w.starts_with('-') && !w.starts_with("--") && w.contains('w')
        }),
        "hdparm" => args[1..].iter().any(|a| {
            let w = a.as_str();
            w.starts_with("--security-erase")
                || w.starts_with("--trim-sector-ranges")
                || w == "--make-bad-sector"
                || w == "--write-sector"
        }),
        "nvme" => has(&["format", "sanitize", "delete-ns", "format-nvm"]),
        "sg_format" => has(&["--format", "-F"]),
        _ => false,
    };
    if destructive && on_device(args) {
        az.flag_rule(&rules::WIPE_DEVICE);
    }
}
