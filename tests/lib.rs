//! Integration tests: the real binary, run hermetically (temp HOME and KUBECONFIG, proxies
//! unset, NO_COLOR set), against files and a fake API server on 127.0.0.1.

mod support;

mod bounds;
mod cli;
mod cluster;
mod completion;
mod connection;
mod differential;
mod differential_ingress;
mod docs;
mod edge;
mod endings;
mod fidelity;
mod gateway;
mod ingress;
mod inputs;
mod local_files;
mod offline;
mod output;
mod record;
mod sandbox;
mod status;
mod three_providers;
mod writes;
