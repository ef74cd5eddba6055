# leakhound - SPDX-License-Identifier: MIT
# An XS module's copies kept by a growing Perl array: every request's document is deep
# copied with Storable (core perl, stripped: its C functions have no names) and kept in
# @main::KEEP. The site is the Perl line; the XS frames under it must say which module
# made them (they are all named after their last name part, or XS.so).
use strict;
use warnings;
use Storable qw(dclone);

our @KEEP;
my $doc = { items => [ map { { sku => "s$_", qty => $_ } } 1 .. 50 ] };
for (1 .. 200) {
    push @KEEP, dclone($doc);    # @dclone
}
