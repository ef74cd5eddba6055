# leakhound - SPDX-License-Identifier: MIT
# A handler in another file called through a code reference, as Plack middleware calls an
# app: its first allocation (its @_) is made while perl enters it, still at the caller's
# line. `report --by function` must name the handler's own file.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use ShopApp;

my $app = \&ShopApp::handler;
sub call { my ($env) = @_; return $app->($env) }    # @call
call({ n => $_ }) for 1 .. 20;
