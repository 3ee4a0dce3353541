# Copyright The yeebench developers. See the LICENSE file at the top of the repository.
#
# SPDX-License-Identifier: BSD-3-Clause

