//! A cron job's script runs under the whole kernel floor (nobody is there to approve
//! it): the probe in `<home>/scripts` cannot write under a system directory, rewrite
//! toolhost's config, change its own scripts, or signal every process, PID 1 or
//! toolhost. Harmless even if the floor failed (`floor_probe.rs`).

use std::time::Duration;

use super::script::run;
use crate::environments::floor_probe::{Probe, enforced};

#[test]
fn a_no_agent_script_cannot_escape_the_floor() {
    let probe = Probe::new().unwrap();
    let scripts = probe.home().join("scripts");
    std::fs::create_dir(&scripts).unwrap();
    let [config, pid] = probe.args();
    std::fs::write(
        scripts.join("job.py"),
        format!(
            "import sys\nsys.argv = ['probe', {config:?}, {pid:?}]\nexec(open({src:?}).read())\nopen(__file__, 'a').write('# planted')\n",
            src = probe.script.display().to_string(),
        ),
    )
    .unwrap();
    let before = std::fs::read_to_string(scripts.join("job.py")).unwrap();
    let out = run(&scripts, "job.py", None, Duration::from_secs(60));
    assert_eq!(
        enforced(probe.escapes(&out.text)),
        Vec::<String>::new(),
        "{}",
        out.text
    );
    if crate::environments::floor_probe::landlock_abi() >= 1 {
        assert_eq!(
            std::fs::read_to_string(scripts.join("job.py")).unwrap(),
            before
        );
    }
}
