# leakhound - SPDX-License-Identifier: MIT
# A login handler that keeps every session's token in a package hash and never expires
# one; the developer wants to see WHAT the kept strings are (Devel::MAT's `show` prints an
# SV's PV, IV, NV). Package scalars of each shape: an escaped string, a long one, a UTF-8
# one, bytes, an integer, a number.
use strict;
use warnings;

package Shop::Session;
our %TOKENS;
our $GREETING = "Welcome \"guest\"\n\t" . ("ab" x 150);
our $PORT = 5077;
our $RATIO = 0.25;
our $CITY = "S\x{e3}o Paulo \x{2603}";
our $RAW = "\x00\x01\xff";

sub login {
    my ($n) = @_;
    $TOKENS{"user$n"} = sprintf("tok-%06d", $n * 7);    # @token
}

package main;
Shop::Session::login($_) for 1 .. 100;
