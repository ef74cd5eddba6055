# leakhound - SPDX-License-Identifier: MIT
package Leaky;
# Test-only XS module (tests/perl/xs/Leaky.c): grab(N) leaks N bytes malloc'ed in C.
use strict;
use warnings;
our $VERSION = '0.1';
require XSLoader;
XSLoader::load('Leaky', $VERSION);
1;
