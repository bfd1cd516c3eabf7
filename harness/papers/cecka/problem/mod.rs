//! The heat problem of Cecka et al.: the plate mesh ([`mesh`]), the system, the element
//! subroutine and the CPU baselines ([`system`]), what the prepared-problem cache keeps of it
//! ([`prepared`]), its checked outputs and error bounds ([`checked`]) and its Matrix Market
//! export ([`export`]).

pub mod checked;
pub mod export;
pub mod mesh;
pub mod prepared;
pub mod system;
