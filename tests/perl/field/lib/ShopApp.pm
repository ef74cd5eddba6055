# leakhound - SPDX-License-Identifier: MIT
# The handler of callers.pl, in its own file as a PSGI app's would be.
package ShopApp;
our @SEEN;

sub handler {
    my ($env) = @_;
    push @SEEN, "seen $env->{n}";    # @seen
    return 1;
}
1;
