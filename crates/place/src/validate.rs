//! Seed 001's lparstat rows, predicted.
