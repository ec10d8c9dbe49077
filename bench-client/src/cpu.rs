//! The client's own CPU time (getrusage), to tell when the client rather than the server is the limit.

use nix::sys::resource::{getrusage, UsageWho};

/// User and system CPU seconds this process has used so far (all threads).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTime {
    pub user_s: f64,
    pub sys_s: f64,
}

impl CpuTime {
    pub fn now() -> CpuTime {
        match getrusage(UsageWho::RUSAGE_SELF) {
            Ok(u) => CpuTime {
                user_s: seconds(u.user_time()),
                sys_s: seconds(u.system_time()),
            },
            // getrusage(RUSAGE_SELF) cannot fail on Linux; report zero rather than stop a run.
            Err(_) => CpuTime::default(),
        }
    }

    /// The CPU used since `earlier`.
    pub fn since(self, earlier: CpuTime) -> CpuTime {
        CpuTime {
            user_s: (self.user_s - earlier.user_s).max(0.0),
            sys_s: (self.sys_s - earlier.sys_s).max(0.0),
        }
    }
}

fn seconds(tv: nix::sys::time::TimeVal) -> f64 {
    tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_moves_forward_when_working() {
        let a = CpuTime::now();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let d = CpuTime::now().since(a);
        assert!(d.user_s + d.sys_s > 0.0, "{d:?}");
    }
}
