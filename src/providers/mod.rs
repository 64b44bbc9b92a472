//! Traffic-routing providers: how the controller turns a step into writes, per kind of ref.

pub mod case;
pub mod gateway;
pub mod ingress;
