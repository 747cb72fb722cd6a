//! gRPC adapters.
